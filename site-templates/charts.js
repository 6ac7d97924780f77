// On a screen narrower than a chart, show where its dates happen rather than the empty stretch before
// them: a chart that marks where its content starts (data-focus, a fraction of its width) is scrolled
// there, a little of what comes before still in view. The chart stays scrollable both ways.
for (const svg of document.querySelectorAll(".chart-box > svg[data-focus]")) {
  const box = svg.parentElement;
  if (box.scrollWidth <= box.clientWidth) continue;
  const x = parseFloat(svg.dataset.focus) * box.scrollWidth;
  box.scrollLeft = Math.max(0, x - box.clientWidth * 0.25);
}

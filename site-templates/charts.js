// On a screen narrower than a chart, show where its dates happen rather than the empty stretch before
// them: a chart that marks where its content starts (data-focus, a fraction of its width) is scrolled
// there, a little of what comes before still in view. The chart stays scrollable both ways, and its
// scale and row labels (the parts marked `sticky`) stay in view as it scrolls, over a background that
// hides what passes under them.
for (const box of document.querySelectorAll(".chart-box")) {
  const svg = box.querySelector(":scope > svg");
  if (svg === null || box.scrollWidth <= box.clientWidth) continue;
  const sticky = svg.querySelectorAll(".sticky");
  if (sticky.length) {
    // A row label's background is as wide as the longest label, not the whole label column.
    const labels = [...svg.querySelectorAll(".sticky .label, .label.sticky")];
    const widest = Math.max(0, ...labels.map((l) => l.getBBox().width));
    for (const bg of svg.querySelectorAll(".label-bg")) bg.setAttribute("width", (widest + 8).toFixed(1));
    const follow = () => {
      // The box scrolls in screen pixels, the chart is drawn in its own units.
      const k = svg.viewBox.baseVal.width / svg.getBoundingClientRect().width;
      const dx = box.scrollLeft * k;
      svg.classList.toggle("scrolled", dx > 0);
      for (const el of sticky) el.setAttribute("transform", `translate(${dx.toFixed(1)} 0)`);
    };
    box.addEventListener("scroll", follow, { passive: true });
    follow();
  }
  if (svg.dataset.focus !== undefined) {
    const x = parseFloat(svg.dataset.focus) * box.scrollWidth;
    box.scrollLeft = Math.max(0, x - box.clientWidth * 0.25);
  }
}

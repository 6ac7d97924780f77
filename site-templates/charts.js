// On a screen narrower than a chart, show where its dates happen rather than the empty stretch before
// them: a chart that marks where its content starts (data-focus, a fraction of its width) is scrolled
// there, just clear of what stays in view at its left. The chart stays scrollable both ways, and its
// scale and row labels (the parts marked `sticky`) stay in view as it scrolls, over a background that
// hides what passes under them.
for (const box of document.querySelectorAll(".chart-box")) {
  const svg = box.querySelector(":scope > svg");
  if (svg === null || box.scrollWidth <= box.clientWidth) continue;
  // The box scrolls in screen pixels, the chart is drawn in its own units.
  const k = svg.viewBox.baseVal.width / svg.getBoundingClientRect().width;
  const sticky = svg.querySelectorAll(".sticky");
  let held = 0;
  if (sticky.length) {
    // A row label's background is as wide as the longest label, at most 40% of the box: a longer name
    // is shortened, so that bars stay in view beside it; its whole name is its title (SVG's name for it).
    const cap = box.clientWidth * 0.4 * k;
    const labels = [...svg.querySelectorAll(".sticky .label, .label.sticky")];
    for (const l of labels) {
      if (l.getComputedTextLength() <= cap) continue;
      const whole = l.textContent;
      const named = l.closest("a") || l;
      const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
      title.textContent = whole;
      named.prepend(title);
      const text = [...l.childNodes].find((c) => c.nodeType === 3) || l;
      let n = whole.length;
      while (n > 1 && l.getComputedTextLength() > cap) text.textContent = whole.slice(0, --n) + "…";
    }
    const widest = Math.max(0, ...labels.map((l) => l.getBBox().width));
    for (const bg of svg.querySelectorAll(".label-bg")) bg.setAttribute("width", (widest + 8).toFixed(1));
    held = Math.max(
      0,
      ...[...svg.querySelectorAll(".label-bg, .axis-bg")].map((r) => r.width.baseVal.value),
    ) / k;
    const follow = () => {
      const dx = box.scrollLeft * k;
      svg.classList.toggle("scrolled", dx > 0);
      for (const el of sticky) el.setAttribute("transform", `translate(${dx.toFixed(1)} 0)`);
    };
    box.addEventListener("scroll", follow, { passive: true });
    follow();
  }
  if (svg.dataset.focus !== undefined) {
    // Clear of the labels held in view, with a little of what comes before still showing.
    const x = parseFloat(svg.dataset.focus) * box.scrollWidth;
    box.scrollLeft = Math.max(0, x - held - box.clientWidth * 0.08);
  }
}

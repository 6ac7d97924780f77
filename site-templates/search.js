// Search over every issue's key, title, milestone, person, labels and column, read from the search index
// (search-index.js), so it works from file:// without a server. Open issues come first. `search.html?q=…`
// opens with that search. Without script the page says so and links to the board.
(function () {
  "use strict";
  var ix = window.commiteaIndex;
  var form = document.getElementById("search");
  var list = document.getElementById("results");
  var count = document.getElementById("count");
  if (!ix || !form || !list) return;
  var day0 = new Date(ix.asOf + "T00:00:00Z");
  function day(n) {
    if (n === null || n === undefined) return form.getAttribute("data-not-within") || "not within the horizon";
    var d = new Date(day0.getTime() + n * 86400000);
    return d.toISOString().slice(0, 10);
  }
  function name(list, i) { return i >= 0 && list[i] !== undefined ? list[i] : ""; }
  var rows = ix.issues.map(function (e) {
    var key = ix.repos[e[0]] + "#" + e[1];
    var milestone = e[4] >= 0 && ix.milestones[e[4]] ? ix.milestones[e[4]][1] : "";
    var column = ix.columns[e[3]] ? ix.columns[e[3]][1] : "";
    var labels = e[7].map(function (l) { return name(ix.labels, l); }).join(" ");
    var hay = [key, e[2], milestone, name(ix.people, e[5]), labels, column].join(" ").toLowerCase();
    return { e: e, key: key, hay: hay, open: e[10] === null };
  });
  // Open issues first, each group in the index's order (by repository and number).
  rows.sort(function (a, b) { return (a.open === b.open) ? 0 : (a.open ? -1 : 1); });
  function run() {
    var words = form.elements.q.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
    while (list.firstChild) list.removeChild(list.firstChild);
    if (words.length === 0) { count.textContent = ""; return; }
    // A word matches where a word of the text starts (`paginat` finds "pagination", `api` not "rapid"),
    // as the agents' search does; one that starts with a sign (`#12`) matches anywhere.
    var tests = words.map(function (w) {
      var esc = w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return /^[\p{L}\p{N}]/u.test(w) ? new RegExp("(^|[^\\p{L}\\p{N}])" + esc, "u") : new RegExp(esc, "u");
    });
    var hits = rows.filter(function (r) {
      return tests.every(function (t) { return t.test(r.hay); });
    });
    var n = hits.length;
    count.textContent = n > 200 ? "showing the first 200 of " + n + " matching issues"
      : n === 1 ? "1 matching issue" : n + " matching issues";
    hits.slice(0, 200).forEach(function (r) {
      var e = r.e;
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "issues/" + ix.repos[e[0]] + "/" + e[1] + ".html";
      a.textContent = r.key;
      li.appendChild(a);
      var t = document.createElement("bdi");
      t.textContent = " " + e[2];
      li.appendChild(t);
      var s = document.createElement("span");
      s.className = "sub";
      var col = ix.columns[e[3]] ? ix.columns[e[3]][1] : "";
      s.textContent = col + (e[10] !== null ? " · closed " + day(e[10]) : " · p50 " + day(e[8]) + ", p80 " + day(e[9]));
      li.appendChild(s);
      list.appendChild(li);
    });
  }
  form.addEventListener("input", run);
  var asked = new URLSearchParams(window.location.search).get("q");
  if (asked) { form.elements.q.value = asked; run(); }
  form.addEventListener("submit", function (ev) { ev.preventDefault(); run(); });
  form.hidden = false;
  var note = document.getElementById("noscript-note");
  if (note) note.hidden = true;
})();

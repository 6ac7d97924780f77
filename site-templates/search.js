// Search over every issue's key and title, read from the search index (search-index.js), so it works
// from file:// without a server. Without script the page says so and links to the board.
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
  var rows = ix.issues.map(function (e) {
    var key = ix.repos[e[0]] + "#" + e[1];
    return { e: e, key: key, hay: (key + " " + e[2]).toLowerCase() };
  });
  function run() {
    var words = form.elements.q.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
    while (list.firstChild) list.removeChild(list.firstChild);
    if (words.length === 0) { count.textContent = ""; return; }
    var hits = rows.filter(function (r) {
      return words.every(function (w) { return r.hay.indexOf(w) >= 0; });
    });
    count.textContent = "showing " + Math.min(hits.length, 200) + " of " + hits.length + " matching issues";
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
  form.addEventListener("submit", function (ev) { ev.preventDefault(); run(); });
  form.hidden = false;
  var note = document.getElementById("noscript-note");
  if (note) note.hidden = true;
})();

// Search over every issue's key, title, milestone, person, labels, column and repository, read from the search index
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
  // Issues in a dependency cycle are not forecast: no dates to give.
  var inCycle = new Set(ix.cycles || []);
  function day(n) {
    if (n === null || n === undefined) return form.getAttribute("data-not-within") || "not within the horizon";
    var d = new Date(day0.getTime() + n * 86400000);
    return d.toISOString().slice(0, 10);
  }
  function name(list, i) { return i >= 0 && list[i] !== undefined ? list[i] : ""; }
  // Text as the search compares it (the agents' search does the same): composed, so "é" typed as one
  // character or as "e" and an accent (macOS) is one letter; no zero-width characters; lower case.
  function lowered(s) { return s.normalize("NFC").replace(/[\u200b\u200c\u200d\u2060\ufeff]/g, "").toLowerCase(); }
  // Scripts written without spaces (Chinese, Japanese, Hangul, Thai, Lao, Khmer, Myanmar): a word starts
  // anywhere, one character can be a word.
  var unspaced = /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[\u{20000}-\u{2fa1f}]/u;
  var rows = ix.issues.map(function (e) {
    var key = ix.repos[e[0]] + "#" + e[1];
    var milestone = e[4] >= 0 && ix.milestones[e[4]] ? ix.milestones[e[4]][1] : "";
    var column = ix.columns[e[3]] ? ix.columns[e[3]][1] : "";
    var labels = e[7].map(function (l) { return name(ix.labels, l); }).join(" ");
    var hay = lowered([e[2], milestone, name(ix.people, e[5]), labels, column].join(" "));
    var repo = ix.repos[e[0]].toLowerCase();
    return { e: e, key: key, repo: repo, name: repo.slice(repo.indexOf("/") + 1), hay: hay, open: e[10] === null };
  });
  // Open issues first, each group in the index's order (by repository and number).
  rows.sort(function (a, b) { return (a.open === b.open) ? 0 : (a.open ? -1 : 1); });
  // A query read as the agents' search reads it: a reference (#12, owner/repo#12, repo#12) names an
  // issue, found first, and so does a bare number where the query is only numbers or it follows "issue"
  // (in "Android 15" the 15 is a word); the other words (two characters or more) match where a word
  // starts (`paginat` finds "pagination", `api` not "rapid") or name the issue's repository (`acme/web`,
  // `web`), every one of them.
  function terms(q) {
    var refs = [], words = [];
    var toks = lowered(q).split(/\s+/).map(function (raw) {
      return raw.replace(/^[,.;:()"']+|[,.;:()"']+$/g, "");
    }).filter(function (tok) { return tok; });
    var numberish = /^(?:([\w.-]+(?:\/[\w.-]+)?)?#)?(\d+)$/;
    var onlyNumbers = toks.every(function (tok) { return numberish.test(tok); });
    toks.forEach(function (tok, i) {
      var m = numberish.exec(tok);
      if (m) {
        var bare = tok.indexOf("#") < 0;
        var afterIssue = i > 0 && (toks[i - 1] === "issue" || toks[i - 1] === "issues");
        if (!bare || onlyNumbers || afterIssue) refs.push({ repo: m[1] || null, n: parseInt(m[2], 10) });
        if (bare) words.push(tok);
        return;
      }
      tok.split(/[^\p{L}\p{N}\p{M}\/_-]+/u).forEach(function (w) {
        var chars = Array.from(w);
        if (chars.length > 1 || (chars.length === 1 && unspaced.test(w))) words.push(w);
      });
    });
    return { refs: refs, words: words };
  }
  // Whether a repository said in the query (lower case) is this row's: owner/name, or the name alone.
  function names(said, r) { return said === r.repo || said === r.name; }
  function run() {
    var t = terms(form.elements.q.value);
    while (list.firstChild) list.removeChild(list.firstChild);
    if (t.refs.length === 0 && t.words.length === 0) {
      count.textContent = form.elements.q.value.trim() ? "type a word of two letters or digits or more (symbols and emoji are not searched), or an issue number" : "";
      return;
    }
    var tests = t.words.map(function (w) {
      var esc = w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (unspaced.test(Array.from(w)[0])) return new RegExp(esc, "u");
      return new RegExp("(^|[^\\p{L}\\p{N}\\p{M}]|" + unspaced.source + ")" + esc, "u");
    });
    var hits = [];
    rows.forEach(function (r) {
      var named = t.refs.some(function (x) { return x.n === r.e[1] && (!x.repo || names(x.repo, r)); });
      var found = tests.length > 0 && tests.every(function (re, i) { return re.test(r.hay) || names(t.words[i], r); });
      if (named || found) hits.push({ r: r, named: named });
    });
    // The issues the query names first; the sort is stable, so open ones stay first within each group.
    hits.sort(function (a, b) { return (a.named === b.named) ? 0 : (a.named ? -1 : 1); });
    hits = hits.map(function (h) { return h.r; });
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
      s.textContent = col + (e[10] !== null ? " · closed " + day(e[10])
        : inCycle.has(ix.repos[e[0]] + "#" + e[1]) ? " · not forecast: in a dependency cycle"
        : " · p50 " + day(e[8]) + ", p80 " + day(e[9]));
      li.appendChild(s);
      list.appendChild(li);
    });
  }
  // The query goes into the address, so Back from a result finds it again (the field itself is not
  // restored: autocomplete is off).
  form.addEventListener("input", function () {
    run();
    var q = form.elements.q.value;
    try {
      window.history.replaceState(null, "", q ? "?q=" + encodeURIComponent(q) : window.location.pathname);
    } catch (e) { /* a browser that refuses it for file:// keeps the page as it is */ }
  });
  var asked = new URLSearchParams(window.location.search).get("q");
  if (asked) { form.elements.q.value = asked; run(); }
  form.addEventListener("submit", function (ev) { ev.preventDefault(); run(); });
  form.hidden = false;
  var note = document.getElementById("noscript-note");
  if (note) note.hidden = true;
})();

// Board filters by milestone, person, priority and label, read from the search index
// (search-index.js). Without script the board shows every card and this does nothing. A long column shows
// its first cards only (200); filtered, it also lists from the index the matching issues it did not show,
// so that a filter answers for the whole column, not for a sample of it.
(function () {
  "use strict";
  var ix = window.commiteaIndex;
  var form = document.getElementById("filters");
  if (!ix || !form) return;
  var byKey = {};
  var column = {};
  ix.columns.forEach(function (c, i) { column[c[0]] = i; });
  function keyOf(e) { return ix.repos[e[0]] + "#" + e[1]; }
  ix.issues.forEach(function (e) {
    byKey[keyOf(e)] = e;
  });
  var day0 = new Date(ix.asOf + "T00:00:00Z");
  // Issues in a dependency cycle are not forecast: no dates to give.
  var inCycle = new Set(ix.cycles || []);
  function day(n) {
    var d = new Date(day0.getTime() + n * 86400000);
    return d.toISOString().slice(0, 10);
  }
  var root = form.getAttribute("data-root") || "";
  // Cards added from the index at most per column: a filter as wide as the column lists its first ones.
  var EXTRA = 300;
  // The Done column lists what closed in the last four weeks (as the page does).
  var DONE_DAYS = 28;
  function extraCard(e) {
    var li = document.createElement("li");
    li.className = "issue extra";
    li.setAttribute("data-key", keyOf(e));
    var a = document.createElement("a");
    a.className = "key";
    a.href = root + "issues/" + ix.repos[e[0]] + "/" + e[1] + ".html";
    a.textContent = keyOf(e);
    li.appendChild(a);
    var t = document.createElement("span");
    t.className = "title";
    var b = document.createElement("bdi");
    b.textContent = e[2];
    t.appendChild(b);
    li.appendChild(document.createTextNode(" "));
    li.appendChild(t);
    if (e[5] >= 0) {
      var who = document.createElement("span");
      who.className = "who";
      who.textContent = ix.people[e[5]] + (e[11] ? " (planned)" : "");
      li.appendChild(who);
    }
    // The badges the page's own cards carry: priority, estimate (Gitea's own marked), milestone.
    var badges = document.createElement("div");
    badges.className = "badges";
    function badge(cls, text) {
      var s = document.createElement("span");
      s.className = "badge " + cls;
      var t = document.createElement("bdi");
      t.textContent = text;
      s.appendChild(t);
      badges.appendChild(s);
      return s;
    }
    if (e[6] >= 0) badge("prio", "p/" + e[6]).setAttribute("data-p", "p/" + e[6]);
    var est = e[12] || "";
    if (est) {
      var native = est.charAt(0) === "~";
      var s = badge("est", native ? est.slice(1) : est);
      if (native) {
        s.title = "Gitea's time estimate";
        var h = document.createElement("span");
        h.className = "visually-hidden";
        h.textContent = " (Gitea's time estimate)";
        s.appendChild(h);
      }
    }
    if (e[4] >= 0 && ix.milestones[e[4]]) badge("ms", ix.milestones[e[4]][1]);
    if (badges.firstChild) li.appendChild(badges);
    var when = document.createElement("div");
    when.className = "when";
    var label = document.createElement("span");
    label.className = "label";
    var band = document.createElement("span");
    band.className = "band";
    if (e[10] !== null) {
      label.textContent = "closed";
      band.textContent = day(e[10]);
    } else if (inCycle.has(keyOf(e))) {
      // As the page's own cards say it.
      label.textContent = "not forecast";
      band.textContent = "in a dependency cycle";
    } else {
      label.textContent = "p50 – p80";
      // As the page's own cards say a date beyond the horizon ("not within 2 years").
      var notWithin = form.getAttribute("data-not-within") || "not within the horizon";
      band.textContent = e[8] === null ? notWithin
        : e[8] === e[9] ? day(e[9]) : day(e[8]) + " – " + (e[9] === null ? notWithin : day(e[9]));
    }
    when.appendChild(label);
    when.appendChild(document.createTextNode(" "));
    when.appendChild(band);
    li.appendChild(when);
    return li;
  }
  function fill(select, names) {
    names.forEach(function (name, i) {
      var o = document.createElement("option");
      o.value = String(i);
      o.textContent = name;
      select.appendChild(o);
    });
  }
  // Open milestones only: a closed one has no card on the board (audit 96: each matched 0).
  ix.milestones.forEach(function (m, i) {
    if (m[2] === false) return;
    var o = document.createElement("option");
    o.value = String(i);
    o.textContent = m[1];
    form.elements.milestone.appendChild(o);
  });
  fill(form.elements.person, ix.people);
  fill(form.elements.label, ix.labels);
  function matches(e, f) {
    if (!e) return true;
    if (f.milestone !== "" && String(e[4]) !== f.milestone) return false;
    if (f.person !== "" && String(e[5]) !== f.person) return false;
    // No priority label means p/2.
    if (f.priority !== "" && String(e[6] < 0 ? 2 : e[6]) !== f.priority) return false;
    if (f.label !== "" && e[7].indexOf(Number(f.label)) < 0) return false;
    return true;
  }
  function apply() {
    var f = {
      milestone: form.elements.milestone.value,
      person: form.elements.person.value,
      priority: form.elements.priority.value,
      label: form.elements.label.value
    };
    var any = f.milestone || f.person || f.priority || f.label;
    // One summary for a screen reader, not a live region per column each saying its own count.
    var said = [];
    document.querySelectorAll("li.issue.extra").forEach(function (li) { li.parentNode.removeChild(li); });
    document.querySelectorAll(".column").forEach(function (col) {
      var shown = 0;
      var cards = col.querySelectorAll("li.issue");
      var onBoard = {};
      cards.forEach(function (li) {
        var k = li.getAttribute("data-key");
        onBoard[k] = true;
        var ok = matches(byKey[k], f);
        li.hidden = !ok;
        if (ok) shown += 1;
      });
      var out = col.querySelector(".filtered");
      var cut = col.querySelector(".shown") !== null;
      var more = [];
      if (any && cut && column[col.id] !== undefined) {
        var done = col.id === "done";
        more = ix.issues.filter(function (e) {
          return e[3] === column[col.id] && !onBoard[keyOf(e)] && matches(e, f)
            && (!done || (e[10] !== null && e[10] >= -DONE_DAYS));
        });
        // After the page's cards: open work by its median (beyond the horizon last, then key) — the
        // index holds no planned start, and the page's own cards are the first in planned order —; done
        // work latest first.
        var at = function (n) { return n === null ? Infinity : n; };
        more.sort(function (a, b) {
          var cmp = function (x, y) { return x === y ? 0 : (x < y ? -1 : 1); };
          var key = cmp(ix.repos[a[0]], ix.repos[b[0]]) || cmp(a[1], b[1]);
          return done ? (b[10] - a[10] || key) : cmp(at(a[8]), at(b[8])) || key;
        });
        var list = col.querySelector("ol.cards-list");
        if (list) more.slice(0, EXTRA).forEach(function (e) { list.appendChild(extraCard(e)); });
      }
      var title = col.querySelector("h2");
      said.push((title ? title.textContent : col.id) + " " + (shown + more.length));
      // The column links (how a phone picks a column) say the matching count too (audit 183: "Diagnosis
      // 35" led to a column that showed no card).
      var jump = document.querySelector('.board-jump a[href="#' + col.id + '"] .count');
      if (jump) {
        var all = col.getAttribute("data-count") || String(cards.length);
        jump.textContent = any ? (shown + more.length) + " of " + all : all;
      }
      if (out) {
        // One wording whether the page cut the column or not (audit 115: "3 of 35 cards" in one column,
        // "9 issues in this column match" in the next): of the column's own count, as its head says.
        var total = shown + more.length;
        var count = Number(col.getAttribute("data-count") || cards.length);
        // Done lists the last four weeks' closes only: of those, not of every closed issue (audit 155:
        // "14 of 1500 issues match" for a milestone with 36 closed).
        var recent = col.id === "done" && column[col.id] !== undefined;
        if (recent) {
          count = ix.issues.filter(function (e) {
            return e[3] === column[col.id] && e[10] !== null && e[10] >= -DONE_DAYS;
          }).length;
        }
        out.textContent = !any ? ""
          : "filtered: " + total + " of " + count
            + (recent ? " closed in the last four weeks" : (count === 1 ? " issue" : " issues")) + " match"
            + (more.length > EXTRA ? " (the first " + (shown + EXTRA) + " listed; the search page lists every one)" : "");
      }
    });
    var summary = document.getElementById("filter-summary");
    if (summary) {
      summary.textContent = any ? "Matching issues: " + said.join(", ") : "Filters cleared: every card is shown";
    }
  }
  form.addEventListener("change", apply);
  form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
  form.hidden = false;
})();

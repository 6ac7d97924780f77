// The site's browser check: every page given, at 1440 and 390 px, in Debian's chromium through
// playwright-core. Fails on a console error (CSP violations included), a page wider than the window,
// a missing chart, or an axe-core violation of serious or critical impact. Optionally takes screenshots.
//
// Usage: node check.mjs SITE_DIR CHROMIUM PAGES_JSON [SCREENSHOT_DIR]
//   PAGES_JSON: [{"path": "runway.html", "charts": 1, "shot": "runway"}, ...]; a page may add "query"
//   ("?q=…", appended to its URL) and "expect": [{"selector": "#count", "contains": "3 matching"}, ...]
//   (text the first element matching each selector must hold, or "lacks" text it must not, or "count":
//   how many elements match), "select": [{"name": "person", "label": "vera"}, ...] (options chosen in
//   the page's selects, by name, before the expectations are checked), and
//   "scrolledOnPhone": [selector, ...] (chart boxes that must open scrolled to their content at 390 px,
//   their scale and row labels in view and something they draw beside them), "heldOnPhone":
//   [selector, ...] (chart boxes whose labels stay in view when scrolled by hand to their middle),
//   "printed": [selector, ...] (what paper must show: the first element matching each is laid out and
//   visible with print media, at 1440 px), "tabbedTo": [selector, ...] (at 1440 px, each is reached by
//   pressing Tab from the top of the page at most 40 times, and shown while focused).
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [site, executablePath, pagesJson, shots] = process.argv.slice(2);
const pages = JSON.parse(pagesJson);
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
const problems = [];
for (const width of [1440, 390]) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  for (const p of pages) {
    const page = await context.newPage();
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    const url = pathToFileURL(resolve(join(site, p.path))).href + (p.query || "");
    await page.goto(url, { waitUntil: "load" });
    const where = `${p.path} at ${width} px`;
    for (const e of errors) problems.push(`${where}: console error: ${e}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    if (overflow > 0) problems.push(`${where}: ${overflow} px of horizontal page scroll`);
    for (const s of p.select || []) {
      await page.selectOption(`select[name="${s.name}"]`, { label: s.label });
    }
    for (const x of p.expect || []) {
      if (x.count !== undefined) {
        const n = await page.evaluate((sel) => document.querySelectorAll(sel).length, x.selector);
        if (n !== x.count) problems.push(`${where}: ${n} elements match ${x.selector}, not ${x.count}`);
        continue;
      }
      const text = await page.evaluate((sel) => document.querySelector(sel)?.textContent ?? null, x.selector);
      if (text === null) problems.push(`${where}: nothing matches ${x.selector}`);
      else if (x.contains && !text.includes(x.contains)) problems.push(`${where}: ${x.selector} says "${text}", not "${x.contains}"`);
      else if (x.lacks && text.includes(x.lacks)) problems.push(`${where}: ${x.selector} says "${text}", with "${x.lacks}"`);
    }
    for (const sel of width === 1440 ? p.tabbedTo || [] : []) {
      await page.evaluate(() => document.activeElement?.blur());
      let reached = false;
      for (let i = 0; i < 40 && !reached; i++) {
        await page.keyboard.press("Tab");
        reached = await page.evaluate((s) => document.activeElement?.matches(s) ?? false, sel);
      }
      if (!reached) problems.push(`${where}: ${sel} is not reached in 40 Tab presses`);
      else {
        const [w, h] = await page.evaluate(() => {
          const r = document.activeElement.getBoundingClientRect();
          return [r.width, r.height];
        });
        if (w < 4 || h < 4) problems.push(`${where}: ${sel} is focused but not shown (${w} x ${h} px)`);
      }
    }
    // On a phone, a chart that marks where its content starts opens there, not on the empty stretch.
    // Its scale and row labels stay in view, and some of what it draws is in view beside them, clear of
    // them; a chart scrolled by hand (heldOnPhone: to its middle) keeps its labels in view too.
    const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const look = (sel) => page.evaluate((s) => {
      const box = document.querySelector(s);
      if (box === null) return null;
      const b = box.getBoundingClientRect();
      const inside = (el) => { const r = el.getBoundingClientRect(); return r.left >= b.left - 0.5 && r.right <= b.right + 0.5; };
      const held = [...box.querySelectorAll(".y-axis .tick, .sticky .label, .label.sticky")];
      const clear = Math.max(b.left, ...held.map((el) => el.getBoundingClientRect().right));
      const meets = (el) => { const r = el.getBoundingClientRect(); return r.right > clear + 4 && r.left < b.right; };
      const marks = [...box.querySelectorAll(".range, .fan-dot, .cone-area, .gbar, .mark, .bar")];
      return {
        left: box.scrollLeft,
        held: held.length,
        out: held.filter((el) => !inside(el)).map((el) => el.textContent).slice(0, 3),
        marks: marks.filter(meets).length,
      };
    }, sel);
    const judge = (sel, seen, scrolled) => {
      if (seen === null) { problems.push(`${where}: nothing matches ${sel}`); return; }
      if (scrolled && !(seen.left > 0)) problems.push(`${where}: ${sel} is not scrolled to its content (scrollLeft ${seen.left})`);
      if (seen.held === 0) problems.push(`${where}: ${sel} has no scale or row label held in view`);
      if (seen.out.length) problems.push(`${where}: ${sel} scrolled its labels out of view: ${seen.out.join(", ")}`);
      if (seen.marks === 0) problems.push(`${where}: ${sel} shows nothing it draws beside its labels`);
    };
    if (width < 800 && (p.scrolledOnPhone || p.heldOnPhone)) await frames();
    for (const sel of width < 800 ? p.scrolledOnPhone || [] : []) judge(sel, await look(sel), true);
    for (const sel of width < 800 ? p.heldOnPhone || [] : []) {
      await page.evaluate((s) => { const b = document.querySelector(s); if (b) b.scrollLeft = (b.scrollWidth - b.clientWidth) / 2; }, sel);
      await frames();
      judge(sel, await look(sel), true);
    }
    if (width === 1440 && p.printed) {
      await page.emulateMedia({ media: "print" });
      for (const sel of p.printed) {
        const shown = await page.evaluate((s) => {
          const el = document.querySelector(s);
          return el === null ? null : el.checkVisibility() && el.getBoundingClientRect().height > 0;
        }, sel);
        if (shown !== true) problems.push(`${where}: ${sel} is ${shown === null ? "missing" : "not shown"} on paper`);
      }
      await page.emulateMedia({ media: "screen" });
    }
    const charts = await page.evaluate(() => document.querySelectorAll("svg.chart").length);
    if (charts < (p.charts || 0)) problems.push(`${where}: ${charts} charts, expected ${p.charts}`);
    const small = await page.evaluate(() => {
      const out = [];
      for (const el of document.querySelectorAll("body *")) {
        if (!el.childNodes.length || el.closest("svg")) continue;
        const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
        if (!own) continue;
        const size = parseFloat(getComputedStyle(el).fontSize);
        if (size < 14 && el.getClientRects().length) out.push(`${el.tagName.toLowerCase()}.${el.className} ${size}px`);
      }
      return out.slice(0, 3);
    });
    for (const s of small) problems.push(`${where}: text below 14 px: ${s}`);
    // axe-core is evaluated through the DevTools protocol, which the page's CSP does not govern.
    await page.evaluate(axeSource);
    const result = await page.evaluate(async () => await window.axe.run(document, { resultTypes: ["violations"] }));
    for (const v of result.violations) {
      if (v.impact === "serious" || v.impact === "critical") {
        problems.push(`${where}: axe ${v.impact}: ${v.id} (${v.nodes.length}): ${v.nodes[0].target.join(" ")}`);
      }
    }
    if (shots && p.shot) {
      await page.screenshot({ path: join(shots, `${p.shot}-${width}.png`), fullPage: false });
    }
    await page.close();
  }
  await context.close();
}
await browser.close();
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`${pages.length} pages at 1440 and 390 px: no console error, no overflow, charts present, no serious axe violation`);

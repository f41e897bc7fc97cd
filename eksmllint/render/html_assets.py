"""The HTML report's inline style sheet and script: a screen and a print layout, and the few
lines of JS behind the severity filters (the report reads the same without them)."""

CSS = """
:root{--err:#c62828;--err-bg:#fdecea;--warn:#b26a00;--warn-bg:#fff4df;--info:#1f6fb2;--info-bg:#e7f1fb;
--ok:#2e7d32;--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--card:#fff;--bg:#f6f7f9;--code:#f3f4f6}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}
header.top{background:#1f2937;color:#fff;padding:14px 28px}
header.top h1{margin:0;font-size:20px;font-weight:650}
header.top .meta{color:#cbd5e1;font-size:13px;margin-top:2px}
nav.toc{display:flex;gap:18px;padding:8px 28px;background:#fff;border-bottom:1px solid var(--line);position:sticky;top:0;z-index:5}
nav.toc a{color:var(--fg);text-decoration:none;font-weight:550}
nav.toc a:hover{text-decoration:underline}
main{max-width:1280px;margin:0 auto;padding:18px 28px 40px}
section{margin-bottom:30px}
h2{font-size:18px;margin:0 0 12px;padding-bottom:4px;border-bottom:2px solid var(--line)}
h3{font-size:15px;margin:0}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 16px;min-width:130px}
.card .num{font-size:26px;font-weight:700;line-height:1.1}
.card .lbl{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card.error{border-left:5px solid var(--err)} .card.error .num{color:var(--err)}
.card.warning{border-left:5px solid var(--warn)} .card.warning .num{color:var(--warn)}
.card.info{border-left:5px solid var(--info)} .card.info .num{color:var(--info)}
.card.clean{border-left:5px solid var(--ok)} .card.clean .num{color:var(--ok)}
.tables{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
table{border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:6px}
th,td{padding:5px 12px;text-align:left;border-bottom:1px solid var(--line);font-size:13px}
th{background:#f9fafb;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:700}
.graph-wrap{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px;overflow-x:auto}
/* never scaled down: labels stay at their drawn size (11.5px+); a wide graph scrolls in its box */
.graph-wrap svg{display:block;max-width:none}
.eml-graph g.bundle:hover path{stroke-width:2.6}
.legend{font-size:12px;color:var(--muted);margin:8px 0;display:flex;flex-direction:column;gap:3px}
.legend .lg{display:inline-flex;align-items:center;gap:4px;margin-right:12px;color:var(--fg)}
.legend i{display:inline-block;width:13px;height:13px;border-radius:3px}
.legend b.ln{display:inline-block;width:22px;border-top:2px solid}
.legend b.ln.dash{border-top-style:dashed}
.legend i.junction{width:8px;height:8px;border-radius:50%;background:var(--muted)}
.note{color:var(--muted);font-size:13px}
.filters{margin:0 0 12px;display:flex;gap:8px;flex-wrap:wrap;align-items:center}
.filters button{font:inherit;font-size:13px;padding:3px 12px;border:1px solid var(--line);border-radius:14px;background:#fff;cursor:pointer}
.filters button[aria-pressed=true]{background:#1f2937;color:#fff;border-color:#1f2937}
article.res{background:var(--card);border:1px solid var(--line);border-radius:8px;margin-bottom:14px;border-left:5px solid var(--line)}
article.res.sev-error{border-left-color:var(--err)} article.res.sev-warning{border-left-color:var(--warn)} article.res.sev-info{border-left-color:var(--info)}
article.res>header{padding:9px 14px;border-bottom:1px solid var(--line);display:flex;flex-wrap:wrap;gap:4px 14px;align-items:baseline}
article.res>header .where{color:var(--muted);font-size:12.5px;font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
ol.findings{list-style:none;margin:0;padding:0}
li.finding{padding:10px 14px;border-bottom:1px solid var(--line)}
li.finding:last-child{border-bottom:0}
.fhead{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap}
.sev{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;padding:1px 7px;border-radius:10px;letter-spacing:.03em}
.sev.error{background:var(--err-bg);color:var(--err)} .sev.warning{background:var(--warn-bg);color:var(--warn)} .sev.info{background:var(--info-bg);color:var(--info)}
a.code{font-weight:700;color:var(--fg);font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace;text-decoration:none}
a.code:hover{text-decoration:underline}
.slug{color:var(--muted);font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace;font-size:12.5px}
.msg{margin:3px 0 4px}
.detail{margin:0 0 4px;color:var(--muted);font-size:.92em}
.loc{color:var(--muted);font-size:12.5px;font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
.why{color:var(--muted);font-size:13px;margin-top:4px}
.fixable{display:inline-block;font-size:11.5px;color:var(--ok);border:1px solid #a5d6a7;border-radius:10px;padding:0 7px}
.suppressed{opacity:.6} .suppressed .msg:after{content:" (suppressed)";color:var(--muted)}
pre.frame{margin:6px 0 2px;background:var(--code);border-radius:6px;padding:6px 0;overflow-x:auto;font:12.5px/1.45 ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
pre.frame span.l{display:block;min-height:1.45em;padding:0 12px 0 0;white-space:pre}
pre.frame span.l b{display:inline-block;min-width:3.2em;padding:0 10px 0 8px;text-align:right;color:#9ca3af;font-weight:400;user-select:none}
pre.frame span.hit{background:#fde68a66}
pre.frame span.hit b{color:var(--fg);font-weight:700}
pre.frame span.caret{color:var(--err);font-weight:700}
article.rule{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin-bottom:12px}
article.rule h3 .slug{font-weight:400}
article.rule h4{margin:10px 0 2px;font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
article.rule p{margin:4px 0}
code{background:var(--code);padding:0 4px;border-radius:4px;font:12.5px ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
.clean-box{background:#e8f5e9;border:1px solid #a5d6a7;border-radius:8px;padding:14px 18px;color:#1b5e20}
body[data-filter=error] li.finding:not(.error),body[data-filter=warning] li.finding:not(.warning),body[data-filter=info] li.finding:not(.info){display:none}
body[data-filter=error] article.res:not(.has-error),body[data-filter=warning] article.res:not(.has-warning),body[data-filter=info] article.res:not(.has-info){display:none}
@media (max-width:800px){main{padding:12px}header.top,nav.toc{padding-left:12px;padding-right:12px}}
@media print{
 body{background:#fff;font-size:11pt}
 nav.toc,.filters{display:none}
 header.top{background:#fff;color:#000;border-bottom:2px solid #000;padding:0 0 6px}
 header.top .meta{color:#333}
 main{max-width:none;padding:0}
 .graph-wrap{overflow:visible;border:0;padding:0}
 article.res,article.rule,li.finding,.card,table{break-inside:avoid}
 pre.frame{white-space:pre-wrap}
 pre.frame span.l{white-space:pre-wrap}
 #rules{break-before:page}
 a{color:inherit;text-decoration:none}
}
@page{margin:14mm}
"""

SCRIPT = """
(function(){
  var buttons = document.querySelectorAll('.filters button');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', function(ev){
      var value = ev.currentTarget.getAttribute('data-filter');
      document.body.setAttribute('data-filter', value);
      for (var j = 0; j < buttons.length; j++) {
        buttons[j].setAttribute('aria-pressed', buttons[j] === ev.currentTarget ? 'true' : 'false');
      }
    });
  }
})();
"""

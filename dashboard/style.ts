// The dashboard's stylesheet, inlined in the page and allowed by its hash in the CSP. Same
// palette as the status page; no web fonts, no images; one column below 600 px.
export const DASHBOARD_STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#5b6470;--card:#fff;--line:#dde1e6;--accent:#0969da;
--ok:#1a7f37;--warn:#b35900;--bad:#cf222e;--unk:#6e7781;--req:#0969da;--min:#8250df;--err:#cf222e}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--card:#161b22;--line:#30363d;
--accent:#4493f8;
--ok:#3fb950;--warn:#d29922;--bad:#f85149;--unk:#8b949e;--req:#4493f8;--min:#a371f7;--err:#f85149}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:1120px;margin:0 auto;padding:16px}
.top{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:8px}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.1rem;margin:0 0 .6rem}h3{font-size:.95rem;margin:1rem 0 .4rem}
a{color:var(--accent)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere}
button,.button{font:inherit;font-size:.9rem;padding:5px 12px;border-radius:6px;border:1px solid var(--line);
background:var(--card);
color:var(--fg);cursor:pointer;text-decoration:none;display:inline-block;white-space:nowrap}
button:hover,.button:hover{border-color:var(--accent)}button:disabled{opacity:.55;cursor:default}
button.primary,.button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
#session{display:flex;flex-wrap:wrap;align-items:center;gap:6px 8px;font-size:.9rem}
#who{color:var(--muted)}#updated{font-size:.8rem;color:var(--muted)}
.notice{padding:10px 14px;border-radius:8px;border:1px solid var(--line);background:var(--card);margin:.6rem 0}
.notice.bad{border-color:var(--bad)}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin:12px 0;
min-width:0}
.grid{display:grid;grid-template-columns:2fr 1fr;gap:0 12px;align-items:start}
#signin{max-width:560px}
#signin form{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
#signin label{width:100%;font-weight:600}
#key{flex:1 1 240px;min-width:0;font:inherit;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9rem;
padding:6px 8px;
border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
.hint{font-size:.85rem;color:var(--muted);margin:.6rem 0 0}
.error{color:var(--bad);margin:.4rem 0;overflow-wrap:anywhere}
.empty{color:var(--muted)}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px 14px;margin:0}
.facts div{min-width:0}.facts dt{font-size:.75rem;color:var(--muted)}.facts dd{margin:0;
font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.plan{display:inline-block;padding:1px 10px;border-radius:999px;font-weight:700;color:#fff;background:var(--accent);
text-transform:uppercase;font-size:.8rem}
.plan.p-free{background:var(--unk)}.plan.p-max{background:var(--min)}
meter{width:100%;height:10px}
.badge{display:inline-block;padding:0 8px;border-radius:999px;font-size:.75rem;font-weight:600;color:#fff;
background:var(--unk);white-space:nowrap}
.badge.ok{background:var(--ok)}.badge.warn{background:var(--warn)}.badge.bad{background:var(--bad)}
.table{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{text-align:left;padding:5px 6px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.78rem;color:var(--muted);font-weight:600}td{font-variant-numeric:tabular-nums}
td.num,th.num{text-align:right;white-space:nowrap}
td .sub{display:block;font-size:.78rem;color:var(--muted);overflow-wrap:anywhere}
figure.chart{margin:.4rem 0}
.chart svg{display:block;width:100%;height:auto;overflow:visible}
.chart .grid-line{stroke:var(--line);stroke-width:1}
.chart .axis text{fill:var(--muted);font-size:11px}
.chart .bar{fill:var(--req)}.chart .bar-err{fill:var(--err)}
.chart .line{fill:none;stroke:var(--min);stroke-width:2}.chart .point{fill:var(--min);stroke:var(--card);
stroke-width:1.5}
.chart .today{fill:var(--muted);opacity:.08}
.chart .bar-ontime,.chart .bar-hw-ontime,.chart .bar-accurate{fill:var(--ok)}.chart .bar-early{fill:var(--warn)}
.chart .bar-late,.chart .bar-bunched{fill:var(--bad)}
.chart .line.median{stroke:var(--req)}.chart .point.median,.chart .point.abs-error{fill:var(--req)}
.chart .line.scheduled{stroke:var(--muted);stroke-dasharray:5 4}.chart .point.scheduled{fill:var(--muted)}
.chart .gap-box{fill:none;stroke:var(--muted);stroke-dasharray:3 3}.chart .gap text{fill:var(--muted);font-size:10px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:.82rem;color:var(--muted);margin:.4rem 0 0;padding:0;
list-style:none}
.key{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.key.req{background:var(--req)}.key.err{background:var(--err)}.key.min{background:var(--min);height:4px;
vertical-align:3px}
.key.ontime,.key.hw,.key.accurate{background:var(--ok)}.key.early{background:var(--warn)}
.key.late,.key.bunched{background:var(--bad)}
.key.median,.key.scheduled{height:3px;vertical-align:4px;background:var(--req)}.key.scheduled{background:var(--muted)}
.key.abs-error{background:var(--req);border-radius:50%}.key.gap{border:1px dashed var(--muted)}
#performance-panel>summary{font-size:.95rem;margin-bottom:.4rem}.perf-figure{margin-top:1rem}
.gaps{font-size:.82rem;color:var(--muted);margin:.4rem 0 0;padding-left:1.2rem}.sub.moved{display:block;
font-size:.82rem;color:var(--warn)}
.filters .wide{grid-column:span 2}
.totals{font-size:.9rem;margin:.3rem 0 .6rem}
details{margin-top:.6rem}summary{cursor:pointer;font-size:.88rem;color:var(--accent)}
.filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px 12px;align-items:end;
margin:0 0 .6rem}
.field{min-width:0}.field label{display:block;font-size:.78rem;color:var(--muted);margin-bottom:2px}
.filters select,.filters input{width:100%;min-width:0;height:2.25rem;font:inherit;font-size:.9rem;padding:4px 6px;
border:1px solid var(--line);
border-radius:6px;background:var(--bg);color:var(--fg)}
.filters [aria-invalid="true"]{border-color:var(--bad);outline:1px solid var(--bad)}
.filters .actions{display:flex;flex-wrap:wrap;gap:6px}.filters .error{grid-column:1/-1;margin:0}
td .sub.failure{color:var(--bad)}
.plan-note{border-left:3px solid var(--warn);padding:6px 12px;margin:0}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
footer{margin:2rem 0 1rem;font-size:.8rem;color:var(--muted)}
[hidden]{display:none!important}
@media (max-width:600px){main{padding:10px}.card{padding:12px}.grid{grid-template-columns:1fr}
.filters .wide{grid-column:auto}
.hide-narrow{display:none}table{font-size:.82rem}}
`;

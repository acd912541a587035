// Browser code: the usage chart, an inline SVG built node by node. Requests are bars on the left
// axis (errors as their red foot), connection-minutes a line on the right axis: the two units
// differ by orders of magnitude, so each gets its own scale, named in the legend and the axes.
// The SVG is drawn at the container's pixel width so its text stays legible on a phone.
export const CHART_SCRIPT = String.raw`
/** The smallest of 1, 2, 2.5, 5 × 10^n that is at least raw (whole numbers for counts). */
function niceStep(raw, integer) {
  if (!(raw > 0)) return 1;
  var magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
  var norm = raw / magnitude;
  var step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * magnitude;
  if (!integer) return step;
  return step < 1 ? 1 : step % 1 ? 5 : step; // 2.5 is the only fraction at or above 1
}

/** 0 … top in "intervals" equal nice steps, so two axes can share one set of grid lines. */
function axisScale(max, intervals, integer) {
  var step = niceStep(max / intervals, integer);
  var ticks = [];
  for (var i = 0; i <= intervals; i++) ticks.push(Number((i * step).toPrecision(12)));
  return { top: step * intervals, ticks: ticks };
}

/** About four intervals for the larger axis; fewer when the counts are small. */
function intervalsFor(max) {
  return max > 0 && max < 4 ? Math.max(1, Math.ceil(max)) : 4;
}

/** Show every n-th date label so that labels of labelPx never overlap in bands of bandPx. */
function labelEvery(bandPx, labelPx) {
  return Math.max(1, Math.ceil(labelPx / Math.max(1, bandPx)));
}

function shortNumber(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(n % 1e6 ? 1 : 0) + 'M';
  if (n >= 1e4) return (n / 1e3).toFixed(n % 1e3 ? 1 : 0) + 'k';
  return String(n);
}

function dayTip(d) {
  return d.date + ': ' + fmtNumber(d.requests) + ' requests (' + fmtNumber(d.errors) + ' errors), '
    + fmtNumber(d.connection_minutes) + ' connection-minutes';
}

/** Draws usage.days into container; returns the svg. */
function drawUsageChart(container, usage) {
  var days = usage.days;
  var width = Math.max(280, Math.floor(container.clientWidth || 640));
  var height = width < 480 ? 200 : 240;
  var m = { left: 44, right: 44, top: 22, bottom: 26 };
  var plotW = width - m.left - m.right;
  var plotH = height - m.top - m.bottom;
  var n = Math.max(1, days.length);
  var band = plotW / n;
  var maxReq = Math.max.apply(null, [0].concat(days.map(function (d) { return d.requests; })));
  var maxMin = Math.max.apply(null, [0].concat(days.map(function (d) { return d.connection_minutes; })));
  var intervals = intervalsFor(maxReq);
  var left = axisScale(maxReq, intervals, true);
  var right = axisScale(maxMin, intervals, false);
  var yReq = function (v) { return m.top + plotH - (v / left.top) * plotH; };
  var yMin = function (v) { return m.top + plotH - (v / right.top) * plotH; };
  var cx = function (i) { return m.left + band * i + band / 2; };
  var range = days.length ? days[0].date + ' to ' + days[days.length - 1].date : 'no days';
  var totals = usage.totals || {};

  var chart = svg('svg', {
    viewBox: '0 0 ' + width + ' ' + height, width: width, height: height, role: 'img',
    'aria-labelledby': 'usage-chart-title usage-chart-desc', 'data-days': days.length,
  }, [
    svg('title', { id: 'usage-chart-title', text: 'API usage per day (' + usage.unit_timezone + '), ' + range }),
    svg('desc', {
      id: 'usage-chart-desc',
      text: 'Bars: requests per day on the left axis, their errors in red at the foot of each bar. Line: connection-minutes '
        + 'of event streams per day on the right axis. Totals: ' + fmtNumber(totals.requests) + ' requests, '
        + fmtNumber(totals.errors) + ' errors, ' + fmtNumber(totals.connection_minutes) + ' connection-minutes.',
    }),
  ]);

  var axis = svg('g', { class: 'axis', 'aria-hidden': 'true' });
  left.ticks.forEach(function (v, i) {
    var y = yReq(v);
    chart.appendChild(svg('line', { class: 'grid-line', x1: m.left, x2: m.left + plotW, y1: y, y2: y }));
    axis.appendChild(svg('text', { x: m.left - 6, y: y + 4, 'text-anchor': 'end', text: shortNumber(v) }));
    axis.appendChild(svg('text', { x: m.left + plotW + 6, y: y + 4, text: shortNumber(right.ticks[i]) }));
  });
  axis.appendChild(svg('text', { x: 0, y: 11, 'text-anchor': 'start', text: 'requests' }));
  axis.appendChild(svg('text', { x: width, y: 11, 'text-anchor': 'end', text: 'conn-min' }));
  var every = labelEvery(band, 42);
  days.forEach(function (d, i) {
    if ((days.length - 1 - i) % every !== 0) return; // the latest day always keeps its label
    axis.appendChild(svg('text', { x: cx(i), y: height - 8, 'text-anchor': 'middle', text: d.date.slice(5) }));
  });
  chart.appendChild(axis);

  var barW = Math.max(2, Math.min(36, band * 0.62));
  var bars = svg('g', { class: 'bars' });
  var points = svg('g', { class: 'points' });
  var path = '';
  days.forEach(function (d, i) {
    var tip = svg('title', { text: dayTip(d) });
    var top = yReq(d.requests);
    var group = svg('g', { class: 'day', 'data-date': d.date, 'data-requests': d.requests, 'data-errors': d.errors }, [tip]);
    group.appendChild(svg('rect', { class: 'bar', x: cx(i) - barW / 2, y: top, width: barW, height: Math.max(0, yReq(0) - top) }));
    if (d.errors > 0) {
      var errTop = yReq(Math.min(d.errors, d.requests));
      group.appendChild(svg('rect', { class: 'bar-err', x: cx(i) - barW / 2, y: errTop, width: barW, height: Math.max(1, yReq(0) - errTop) }));
    }
    bars.appendChild(group);
    var y = yMin(d.connection_minutes);
    path += (i === 0 ? 'M' : 'L') + cx(i).toFixed(1) + ' ' + y.toFixed(1);
    points.appendChild(svg('circle', {
      class: 'point', cx: cx(i), cy: y, r: band < 14 ? 2 : 3.5, 'data-date': d.date, 'data-minutes': d.connection_minutes,
    }, [svg('title', { text: dayTip(d) })]));
  });
  chart.appendChild(bars);
  if (days.length > 1) chart.appendChild(svg('path', { class: 'line', d: path, 'aria-hidden': 'true' }));
  chart.appendChild(points);
  fill(container, chart);
  return chart;
}

/** The same figures as a table, for screen readers and for copying. */
function usageTable(usage) {
  var head = el('tr', null, ['Date', 'Requests', 'Errors', 'Connection-minutes'].map(function (h, i) {
    return el('th', { scope: 'col', class: i ? 'num' : null, text: h });
  }));
  var rows = usage.days.slice().reverse().map(function (d) {
    return el('tr', { 'data-date': d.date }, [
      el('th', { scope: 'row', text: d.date }),
      el('td', { class: 'num', text: fmtNumber(d.requests) }),
      el('td', { class: 'num', text: fmtNumber(d.errors) }),
      el('td', { class: 'num', text: fmtNumber(d.connection_minutes) }),
    ]);
  });
  return el('div', { class: 'table' }, el('table', { class: 'usage-table' }, [el('thead', null, head), el('tbody', null, rows)]));
}
`;

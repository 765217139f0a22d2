// Small charts drawn as plain SVG: a few hundred lines we own instead of a
// charting library to vendor and keep up to date, every point a DOM node a
// test (or a screen reader, through <title>) can read, and a viewBox that
// scales from a phone to a laptop screen.
import { bound, count } from './format.js';
import { svg } from './dom.js';

const WIDTH = 320;
const HEIGHT = 150;
const PLOT = { left: 44, right: 8, top: 30, bottom: 18 };

// 1, 2 or 5 times a power of ten, at or above `value`: round axis labels.
function niceCeiling(value) {
  if (!(value > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function frame(title, className) {
  const chart = svg('svg', {
    class: `chart ${className}`,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-label': title,
  });
  chart.append(svg('text', { x: 4, y: 12, class: 'chart-title' }, [title]));
  return chart;
}

// Runs of consecutive points with a value: a null (no requests, a failed
// read) breaks the line instead of drawing a misleading zero.
function runs(points) {
  const out = [];
  let run = [];
  for (const point of points) {
    if (point[1] === null || point[1] === undefined) {
      if (run.length) out.push(run);
      run = [];
    } else {
      run.push(point);
    }
  }
  if (run.length) out.push(run);
  return out;
}

// series: [{name, label, points: [[t ms, value or null], ...]}], drawn
// from `now - windowMs` to `now`; `format` turns a value into its label
// (the axis, the legend's latest value).
export function lineChart({ title, className, series, now, windowMs, format }) {
  const chart = frame(title, className);
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const values = series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => v !== null);
  const top = niceCeiling(Math.max(0, ...values));
  const x = (t) => PLOT.left + plotWidth * (1 - (now - t) / windowMs);
  const y = (v) => PLOT.top + plotHeight * (1 - v / top);

  for (const [value, label] of [[0, '0'], [top / 2, format(top / 2)], [top, format(top)]]) {
    chart.append(svg('line', { x1: PLOT.left, x2: WIDTH - PLOT.right, y1: y(value), y2: y(value),
      class: 'grid' }));
    chart.append(svg('text', { x: PLOT.left - 4, y: y(value) + 3, class: 'axis',
      'text-anchor': 'end' }, [label]));
  }
  const seconds = Math.round(windowMs / 1000);
  chart.append(svg('text', { x: PLOT.left, y: HEIGHT - 4, class: 'axis' },
    [seconds < 120 ? `-${seconds} s` : `-${Math.round(seconds / 60)} min`]));
  chart.append(svg('text', { x: WIDTH - PLOT.right, y: HEIGHT - 4, class: 'axis',
    'text-anchor': 'end' }, ['now']));

  let legendX = PLOT.left;
  series.forEach((s, index) => {
    const latest = [...s.points].reverse().find((p) => p[1] !== null);
    const text = `${s.label} ${latest ? format(latest[1]) : '-'}`;
    chart.append(svg('rect', { x: legendX, y: 18, width: 7, height: 7, class: `s${index}` }));
    chart.append(svg('text', { x: legendX + 10, y: 25, class: 'legend' }, [text]));
    legendX += 18 + text.length * 5.2;

    const group = svg('g', { class: `series s${index}`, 'data-series': s.name,
      'data-points': s.points.filter((p) => p[1] !== null).length });
    for (const run of runs(s.points)) {
      if (run.length === 1) {
        group.append(svg('circle', { cx: x(run[0][0]), cy: y(run[0][1]), r: 1.5 }));
      } else {
        group.append(svg('polyline', {
          points: run.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' '),
        }));
      }
    }
    chart.append(group);
  });
  if (!values.length) {
    chart.append(svg('text', { x: WIDTH / 2, y: HEIGHT / 2 + 8, class: 'empty',
      'text-anchor': 'middle' }, ['no requests yet']));
  }
  return chart;
}

// One /stats histogram as bars, from its first to its last non-empty
// bucket: the log-scale buckets make the bars a log-scale axis.
export function histogramChart({ title, className, histogram, bounds }) {
  const chart = frame(title, className);
  const buckets = histogram.buckets ?? [];
  const first = buckets.findIndex((n) => n > 0);
  if (first < 0) {
    chart.append(svg('text', { x: WIDTH / 2, y: HEIGHT / 2 + 8, class: 'empty',
      'text-anchor': 'middle' }, ['no proxied requests yet']));
    return chart;
  }
  const last = buckets.length - 1 - [...buckets].reverse().findIndex((n) => n > 0);
  const shown = buckets.slice(first, last + 1);
  const highest = Math.max(...shown);
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const barWidth = plotWidth / shown.length;
  // The last bucket has no upper bound: it holds what lies above the others.
  const label = (i) => (i < bounds.length ? `≤ ${bound(bounds[i])}` : `> ${bound(bounds.at(-1))}`);

  chart.append(svg('text', { x: PLOT.left - 4, y: PLOT.top + 3, class: 'axis',
    'text-anchor': 'end' }, [count(highest)]));
  chart.append(svg('text', { x: PLOT.left - 4, y: PLOT.top + plotHeight + 3, class: 'axis',
    'text-anchor': 'end' }, ['0']));
  shown.forEach((n, offset) => {
    const i = first + offset;
    // At least a pixel: a rare bucket stays visible beside a crowded one.
    const height = n > 0 ? Math.max(1, (plotHeight * n) / highest) : 0;
    chart.append(svg('rect', {
      x: PLOT.left + offset * barWidth + 0.5,
      y: PLOT.top + plotHeight - height,
      width: Math.max(barWidth - 1, 0.5),
      height,
      class: 'bar',
      'data-count': n,
    }, [svg('title', {}, [`${label(i)}: ${count(n)}`])]));
  });
  chart.append(svg('text', { x: PLOT.left, y: HEIGHT - 4, class: 'axis' },
    [label(first)]));
  chart.append(svg('text', { x: WIDTH - PLOT.right, y: HEIGHT - 4, class: 'axis',
    'text-anchor': 'end' }, [label(last)]));
  return chart;
}

/**
 * Hand-written SVG line charts for BENCHMARKS.md (no plotting dependency): categorical or
 * linear x axis, linear y axis from zero, a legend, one polyline with markers per series.
 */
export interface Series {
  name: string;
  color: string;
  points: ReadonlyArray<{ x: number; y: number }>;
  dashed?: boolean;
  markers?: boolean;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  /** `category`: the x values are indexes into `categories`, evenly spaced. */
  xAxis: { kind: 'category'; categories: readonly string[] } | { kind: 'linear'; max?: number };
  yMax?: number;
  /** Horizontal reference lines, e.g. percentiles. */
  yGuides?: ReadonlyArray<{ y: number; label: string }>;
  width?: number;
  height?: number;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A "nice" step (1, 2 or 5 × 10^n) giving about `count` ticks up to `max`. */
function niceStep(max: number, count: number): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const base = raw / power;
  return (base <= 1 ? 1 : base <= 2 ? 2 : base <= 5 ? 5 : 10) * power;
}

const format = (value: number) => (Math.abs(value) >= 1000 ? value.toLocaleString('en-US', { maximumFractionDigits: 0 }) : Number(value.toPrecision(4)).toString());

export function lineChart(series: readonly Series[], options: ChartOptions): string {
  const width = options.width ?? 860;
  const height = options.height ?? 420;
  const legendWidth = 280;
  const margin = { top: 48, right: legendWidth + 20, bottom: 56, left: 72 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const allY = series.flatMap((s) => s.points.map((p) => p.y)).filter(Number.isFinite);
  const yStep = niceStep(options.yMax ?? Math.max(...allY, 0), 5);
  const yTop = options.yMax ?? Math.max(yStep, Math.ceil(Math.max(...allY, 0) / yStep) * yStep);
  const xMax =
    options.xAxis.kind === 'category'
      ? Math.max(1, options.xAxis.categories.length - 1)
      : (options.xAxis.max ?? Math.max(...series.flatMap((s) => s.points.map((p) => p.x)), 1));
  const xOf = (x: number) => margin.left + (options.xAxis.kind === 'category' && options.xAxis.categories.length === 1 ? plotW / 2 : (Math.min(x, xMax) / xMax) * plotW);
  const yOf = (y: number) => margin.top + plotH - (Math.min(y, yTop) / yTop) * plotH;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(`<text x="${margin.left}" y="24" font-size="15" font-weight="bold">${escape(options.title)}</text>`);
  // Y grid and ticks.
  for (let y = 0; y <= yTop + yStep / 1000; y += yStep) {
    const py = yOf(y).toFixed(1);
    parts.push(`<line x1="${margin.left}" y1="${py}" x2="${margin.left + plotW}" y2="${py}" stroke="#e3e3e3"/>`);
    parts.push(`<text x="${margin.left - 8}" y="${py}" text-anchor="end" dominant-baseline="middle" fill="#444">${format(y)}</text>`);
  }
  // X ticks.
  if (options.xAxis.kind === 'category') {
    options.xAxis.categories.forEach((label, index) => {
      const px = xOf(index).toFixed(1);
      parts.push(`<line x1="${px}" y1="${margin.top}" x2="${px}" y2="${margin.top + plotH}" stroke="#f0f0f0"/>`);
      parts.push(`<text x="${px}" y="${margin.top + plotH + 18}" text-anchor="middle" fill="#444">${escape(label)}</text>`);
    });
  } else {
    const xStep = niceStep(xMax, 8);
    for (let x = 0; x <= xMax + xStep / 1000; x += xStep) {
      const px = xOf(x).toFixed(1);
      parts.push(`<line x1="${px}" y1="${margin.top}" x2="${px}" y2="${margin.top + plotH}" stroke="#f0f0f0"/>`);
      parts.push(`<text x="${px}" y="${margin.top + plotH + 18}" text-anchor="middle" fill="#444">${format(x)}</text>`);
    }
  }
  for (const guide of options.yGuides ?? []) {
    const py = yOf(guide.y).toFixed(1);
    parts.push(`<line x1="${margin.left}" y1="${py}" x2="${margin.left + plotW}" y2="${py}" stroke="#999" stroke-dasharray="2 3"/>`);
    parts.push(`<text x="${margin.left + 4}" y="${Number(py) - 4}" fill="#777" font-size="11">${escape(guide.label)}</text>`);
  }
  // Axes and labels.
  parts.push(`<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="#333"/>`);
  parts.push(`<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="#333"/>`);
  parts.push(`<text x="${margin.left + plotW / 2}" y="${height - 14}" text-anchor="middle" fill="#222">${escape(options.xLabel)}</text>`);
  parts.push(`<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#222">${escape(options.yLabel)}</text>`);
  // Series.
  for (const s of series) {
    const points = s.points.filter((p) => Number.isFinite(p.y));
    if (points.length === 0) continue;
    const path = points.map((p) => `${xOf(p.x).toFixed(1)},${yOf(p.y).toFixed(1)}`).join(' ');
    parts.push(`<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    if (s.markers ?? true) for (const p of points) parts.push(`<circle cx="${xOf(p.x).toFixed(1)}" cy="${yOf(p.y).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
  }
  // Legend.
  const legendX = width - legendWidth - 10;
  series.forEach((s, index) => {
    const ly = margin.top + 8 + index * 20;
    parts.push(`<line x1="${legendX}" y1="${ly}" x2="${legendX + 24}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    parts.push(`<text x="${legendX + 30}" y="${ly}" dominant-baseline="middle" fill="#222">${escape(s.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Several charts of the same width, one above the other, as one SVG document. */
export function stackCharts(charts: readonly string[]): string {
  let offset = 0;
  let width = 0;
  const nested = charts.map((chart) => {
    const size = /width="(\d+)" height="(\d+)"/.exec(chart);
    const chartWidth = Number(size?.[1] ?? 0);
    const chartHeight = Number(size?.[2] ?? 0);
    const placed = chart.replace('<svg xmlns="http://www.w3.org/2000/svg"', `<svg x="0" y="${offset}"`);
    offset += chartHeight;
    width = Math.max(width, chartWidth);
    return placed;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${offset}" viewBox="0 0 ${width} ${offset}">\n${nested.join('')}</svg>\n`;
}

// Small time-series line charts on <canvas>, no dependencies.
"use strict";

const PALETTE = ["#1f6feb", "#e36209", "#1a7f37", "#8250df", "#cf222e", "#0a7f7f", "#bf8700", "#6e7781"];

// niceStep returns a round step (1, 2 or 5 × 10^k) giving about n ticks over span.
function niceStep(span, n) {
  if (!(span > 0)) return 1;
  const raw = span / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

// fmtNum renders axis and value labels compactly.
function fmtNum(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(a >= 1e10 ? 0 : 1) + "G";
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + "M";
  if (a >= 1e4) return (v / 1e3).toFixed(a >= 1e5 ? 0 : 1) + "k";
  if (Number.isInteger(v)) return String(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toFixed(2);
}

function fmtClock(ms) {
  const d = new Date(ms);
  const p = (x) => String(x).padStart(2, "0");
  return p(d.getUTCHours()) + ":" + p(d.getUTCMinutes()) + ":" + p(d.getUTCSeconds());
}

// A Chart draws series of {x: ms, y: number} points.
class Chart {
  constructor(parent, title, unit) {
    this.unit = unit || "";
    this.box = document.createElement("div");
    this.box.className = "chart";
    const head = document.createElement("div");
    head.className = "title";
    const name = document.createElement("span");
    name.textContent = title + (unit ? " (" + unit + ")" : "");
    this.last = document.createElement("span");
    this.last.className = "last";
    head.append(name, this.last);
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("aria-label", title);
    this.canvas.dataset.points = "0";
    this.box.append(head, this.canvas);
    parent.append(this.box);
  }

  // draw renders series: [{name, points: [{x, y}]}]. It returns the
  // number of points drawn.
  draw(series) {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(c.clientWidth, 200), h = Math.max(c.clientHeight, 120);
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    const pts = series.flatMap((s) => s.points);
    c.dataset.points = String(pts.length);
    if (pts.length === 0) {
      g.fillStyle = "#8c959f";
      g.textAlign = "center";
      g.fillText("no data", w / 2, h / 2);
      this.last.textContent = "";
      return 0;
    }
    let x0 = Math.min(...pts.map((p) => p.x)), x1 = Math.max(...pts.map((p) => p.x));
    if (x1 === x0) { x0 -= 1000; x1 += 1000; }
    let y1 = Math.max(...pts.map((p) => p.y), 0), y0 = Math.min(...pts.map((p) => p.y), 0);
    if (y1 === y0) y1 = y0 + 1;
    const step = niceStep(y1 - y0, 4);
    y1 = Math.ceil(y1 / step) * step;
    y0 = Math.floor(y0 / step) * step;
    const left = 46, right = 10, bottom = 20;
    // Legend layout (several series): as many rows as the names need.
    const legend = [];
    if (series.length > 1) {
      let lx = left, ly = 2;
      for (const s of series) {
        const sw = 20 + g.measureText(s.name).width;
        if (lx + sw > w - right && lx > left) { lx = left; ly += 14; }
        legend.push({ x: lx, y: ly });
        lx += sw;
      }
    }
    const top = legend.length ? legend[legend.length - 1].y + 20 : 8;
    const px = (x) => left + ((x - x0) / (x1 - x0)) * (w - left - right);
    const py = (y) => top + (1 - (y - y0) / (y1 - y0)) * (h - top - bottom);
    // Grid and y labels.
    g.strokeStyle = "#eaeef2";
    g.fillStyle = "#5f6b7a";
    g.lineWidth = 1;
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (let y = y0; y <= y1 + step / 2; y += step) {
      const yy = Math.round(py(y)) + 0.5;
      g.beginPath(); g.moveTo(left, yy); g.lineTo(w - right, yy); g.stroke();
      g.fillText(fmtNum(y), left - 4, yy);
    }
    // X labels: a few clock times.
    g.textAlign = "center";
    g.textBaseline = "top";
    const xs = niceStep(x1 - x0, 4);
    for (let x = Math.ceil(x0 / xs) * xs; x <= x1; x += xs) {
      const label = fmtClock(x), half = g.measureText(label).width / 2;
      if (px(x) + half <= w && px(x) - half >= 0) g.fillText(label, px(x), h - bottom + 4);
    }
    g.strokeStyle = "#afb8c1";
    g.beginPath(); g.moveTo(left, h - bottom + 0.5); g.lineTo(w - right, h - bottom + 0.5); g.stroke();
    // Lines, dots and the legend.
    series.forEach((s, i) => {
      const color = s.color || PALETTE[i % PALETTE.length];
      g.strokeStyle = color;
      g.fillStyle = color;
      g.lineWidth = 1.5;
      g.beginPath();
      s.points.forEach((p, j) => (j ? g.lineTo(px(p.x), py(p.y)) : g.moveTo(px(p.x), py(p.y))));
      g.stroke();
      if (s.points.length <= 60) {
        s.points.forEach((p) => { g.beginPath(); g.arc(px(p.x), py(p.y), 2, 0, 2 * Math.PI); g.fill(); });
      }
      if (series.length > 1) {
        g.textAlign = "left";
        g.textBaseline = "top";
        const at = legend[i];
        g.fillRect(at.x, at.y + 4, 10, 3);
        g.fillStyle = "#1d2430";
        g.fillText(s.name, at.x + 13, at.y);
      }
    });
    if (series.length === 1) {
      const ps = series[0].points;
      this.last.textContent = "latest " + fmtNum(ps[ps.length - 1].y) + (this.unit ? " " + this.unit : "");
    } else {
      this.last.textContent = "";
    }
    return pts.length;
  }
}

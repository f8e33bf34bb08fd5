// Every GPU of the cluster as one cell on a canvas, grouped by leaf switch
// and node (GET /v1/cluster/gpus). A canvas, not one element per GPU: at
// 25,000 GPUs a redraw is a few milliseconds and the page stays light.
import { h } from "./dom.js";

export const CELL_COLORS = {
  ".": "#e5e9f0",  // free
  A: "#2563eb",    // allocated
  F: "#8b5cf6",    // shared by fractions
  I: "#f59e0b",    // allocated but idle
  U: "#dc2626",    // unhealthy
  C: "#9ca3af",    // free on a cordoned node
  L: "#111827",    // node lost
};

const GPUS_PER_ROW = 8;
const NODE_GAP = 2;
const LEAF_GAP = 12;
const LABEL_HEIGHT = 14;

// Smaller cells for larger clusters, so 25,000 GPUs fit a screen or two.
function cellSize(totalGpus) {
  if (totalGpus <= 512) return 14;
  if (totalGpus <= 4096) return 8;
  return 4;
}

// Places each leaf as a near-square block of node rows, leaves flowing left
// to right. Returns node rectangles for drawing and hit-testing.
export function layout(nodes, width) {
  const total = nodes.reduce((sum, n) => sum + n.gpus.length, 0);
  const cell = cellSize(total);
  const pitch = cell + 1;
  const leaves = [];
  for (const node of nodes) {
    const last = leaves[leaves.length - 1];
    if (last && last.name === node.leaf) last.nodes.push(node);
    else leaves.push({ name: node.leaf, nodes: [node] });
  }
  const rects = [];
  const labels = [];
  let x = 0, y = 0, rowHeight = 0;
  for (const leaf of leaves) {
    const widest = Math.max(1, ...leaf.nodes.map((n) => Math.min(n.gpus.length, GPUS_PER_ROW)));
    const nodeWidth = widest * pitch + NODE_GAP;
    const nodeRows = Math.max(...leaf.nodes.map((n) => Math.ceil(n.gpus.length / GPUS_PER_ROW)), 1);
    const nodeHeight = nodeRows * pitch + NODE_GAP;
    const columns = Math.max(1, Math.min(leaf.nodes.length, Math.round(Math.sqrt((leaf.nodes.length * nodeHeight) / nodeWidth))));
    const blockWidth = Math.max(columns * nodeWidth, 40);
    const blockHeight = LABEL_HEIGHT + Math.ceil(leaf.nodes.length / columns) * nodeHeight;
    if (x > 0 && x + blockWidth > width) {
      x = 0;
      y += rowHeight + LEAF_GAP;
      rowHeight = 0;
    }
    labels.push({ text: leaf.name, x, y: y + LABEL_HEIGHT - 4 });
    leaf.nodes.forEach((node, i) => {
      rects.push({
        node,
        x: x + (i % columns) * nodeWidth,
        y: y + LABEL_HEIGHT + Math.floor(i / columns) * nodeHeight,
        w: nodeWidth - NODE_GAP,
        h: nodeHeight - NODE_GAP,
      });
    });
    x += blockWidth + LEAF_GAP;
    rowHeight = Math.max(rowHeight, blockHeight);
  }
  return { cell, pitch, rects, labels, height: y + rowHeight + 2 };
}

export class Heatmap {
  constructor(onSelectNode) {
    this.canvas = h("canvas", { class: "heatmap", role: "img", "aria-label": "GPU heatmap" });
    this.tooltip = h("div", { class: "tooltip", hidden: true });
    this.element = h("div", { class: "heatmap-box" }, this.canvas, this.tooltip);
    this.data = null;
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("mouseleave", () => { this.tooltip.hidden = true; });
    this.canvas.addEventListener("click", (e) => {
      const hit = this.hit(e);
      if (hit) onSelectNode(hit.rect.node.name);
    });
    this.resize = new ResizeObserver(() => this.draw());
    this.resize.observe(this.element);
  }

  update(data) {
    this.data = data;
    this.draw();
  }

  draw() {
    if (!this.data) return;
    const started = performance.now();
    const width = Math.max(this.element.clientWidth, 200);
    this.layout = layout(this.data.nodes, width);
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.floor(width * ratio);
    this.canvas.height = Math.floor(this.layout.height * ratio);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${this.layout.height}px`;
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, this.layout.height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.fillStyle = "#475569";
    for (const label of this.layout.labels) ctx.fillText(label.text, label.x, label.y);
    const { cell, pitch } = this.layout;
    // One fillStyle change per color, not per cell.
    for (const [code, color] of Object.entries(CELL_COLORS)) {
      ctx.fillStyle = color;
      for (const rect of this.layout.rects) {
        const cells = rect.node.gpus;
        for (let i = cells.indexOf(code); i !== -1; i = cells.indexOf(code, i + 1)) {
          ctx.fillRect(rect.x + (i % GPUS_PER_ROW) * pitch, rect.y + Math.floor(i / GPUS_PER_ROW) * pitch, cell, cell);
        }
      }
    }
    this.drawMs = performance.now() - started;
    this.canvas.dataset.cells = String(this.layout.rects.reduce((n, r) => n + r.node.gpus.length, 0));
  }

  hit(event) {
    if (!this.layout) return null;
    const bounds = this.canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left, y = event.clientY - bounds.top;
    const rect = this.layout.rects.find((r) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h);
    if (!rect) return null;
    const { pitch } = this.layout;
    const gpu = Math.floor((y - rect.y) / pitch) * GPUS_PER_ROW + Math.floor((x - rect.x) / pitch);
    return { rect, gpu: gpu < rect.node.gpus.length ? gpu : null, x, y };
  }

  hover(event) {
    const hit = this.hit(event);
    if (!hit) {
      this.tooltip.hidden = true;
      this.canvas.style.cursor = "default";
      return;
    }
    const { node } = hit.rect;
    const state = hit.gpu === null ? node.state : this.data.legend[node.gpus[hit.gpu]];
    this.tooltip.textContent = `${node.name}${hit.gpu === null ? "" : ` · GPU ${hit.gpu}`} · ${state} · ${node.leaf}`;
    this.tooltip.style.left = `${hit.x + 12}px`;
    this.tooltip.style.top = `${hit.y + 12}px`;
    this.tooltip.hidden = false;
    this.canvas.style.cursor = "pointer";
  }

  destroy() {
    this.resize.disconnect();
  }
}

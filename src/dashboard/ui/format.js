// Numbers and times as operators read them.

export function gpus(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/0+$/, "");
}

export function percent(part, whole) {
  return whole > 0 ? `${Math.round((100 * part) / whole)}%` : "–";
}

export function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function ago(ms) {
  return ms > 0 ? `${duration(Date.now() - ms)} ago` : "–";
}

export function time(ms) {
  return ms > 0 ? new Date(ms).toLocaleString() : "–";
}

export function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

export function gpuHours(seconds) {
  return (seconds / 3600).toFixed(seconds >= 36000 ? 0 : 2);
}

#include "node/node_metrics.h"

#include "metrics/exposition.h"

namespace tessera::node {

std::string RenderNodeMetrics(const NodeTelemetry& t) {
  constexpr double kMiB = 1 << 20;
  metrics::Snapshot s;
  // dcgm-exporter's labels, camelCase included, on its families; snake_case on
  // ours. Both come from the same scrape target, so PromQL joins them on
  // (instance, gpu).
  const auto device = [&](const GpuInfo& g) {
    return metrics::Labels{{"gpu", std::to_string(g.index)}, {"UUID", g.uuid}, {"device", "nvidia" + std::to_string(g.index)},
                           {"modelName", g.name.empty() ? g.model : g.name}, {"Hostname", t.hostname}};
  };
  const auto ours = [&](const GpuInfo& g) { return metrics::Labels{{"gpu", std::to_string(g.index)}, {"uuid", g.uuid}}; };
  for (const GpuSample& sample : t.samples) {
    if (sample.index < 0 || static_cast<std::size_t>(sample.index) >= t.gpus.size()) continue;
    const GpuInfo& g = t.gpus[static_cast<std::size_t>(sample.index)];
    const metrics::Labels labels = device(g);
    const metrics::Labels own = ours(g);
    s.Gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).").Add(labels, sample.utilization_percent);
    s.Gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).")
        .Add(labels, static_cast<double>(sample.memory_used_bytes) / kMiB);
    s.Gauge("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).")
        .Add(labels, static_cast<double>(g.memory_bytes - sample.memory_used_bytes) / kMiB);
    s.Gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).").Add(labels, sample.temperature_c);
    s.Gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).").Add(labels, sample.power_watts);
    const auto xid = t.last_xid.find(g.index);
    s.Gauge("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.")
        .Add(labels, xid == t.last_xid.end() ? 0 : static_cast<double>(xid->second));
    const auto count = t.xid_count.find(g.index);
    s.Counter("tessera_gpu_xid_errors_total", "Xid errors reported by the GPU since the agent started.")
        .Add(own, count == t.xid_count.end() ? 0 : static_cast<double>(count->second));
    s.Gauge("tessera_gpu_healthy", "1 while the GPU is in service: the agent can query it and no fault took it out.")
        .Add(own, g.healthy && !t.out_of_service.contains(g.index) ? 1 : 0);
  }
  for (const GpuTenant& tenant : t.tenants) {
    if (tenant.gpu < 0 || static_cast<std::size_t>(tenant.gpu) >= t.gpus.size()) continue;
    metrics::Labels labels = ours(t.gpus[static_cast<std::size_t>(tenant.gpu)]);
    labels.insert({{"job", tenant.job}, {"job_name", tenant.job_name}, {"queue", tenant.queue}, {"user", tenant.user},
                   {"task", tenant.task}});
    s.Gauge("tessera_gpu_allocation_ratio", "Share of the GPU a task holds (1: the whole GPU).").Add(labels, tenant.share);
    if (tenant.memory_limit > 0) {
      s.Gauge("tessera_gpu_job_memory_limit_bytes", "GPU memory a task sharing the GPU may hold (its cap).")
          .Add(labels, static_cast<double>(tenant.memory_limit));
    }
    if (tenant.memory_used >= 0) {
      s.Gauge("tessera_gpu_job_memory_used_bytes", "GPU memory a task holds on the GPU.")
          .Add(labels, static_cast<double>(tenant.memory_used));
    }
  }
  return s.Render();
}

}  // namespace tessera::node

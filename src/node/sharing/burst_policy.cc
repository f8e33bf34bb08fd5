#include "node/sharing/burst_policy.h"

#include <set>

#include "base/quantity.h"

namespace tessera::node {

std::vector<BurstDecision> BurstPolicy::Decide(const vgpu::LedgerSnapshot& ledger, std::int64_t now_ns,
                                               const std::function<CheckpointContract(const std::string&)>& contract,
                                               bool* clear_reclaim) {
  std::vector<BurstDecision> decisions;
  std::set<std::string> bursting;
  for (const vgpu::TaskUsage& t : ledger.tasks) {
    if (!t.bursting()) continue;
    bursting.insert(t.id);
    std::string reason;
    if (ledger.reclaim_wanted > 0) {
      reason = "a guaranteed task needs " + FormatBytes(ledger.reclaim_wanted) + " of GPU memory it holds past its cap";
    } else if (t.burst_since_ns > 0 && now_ns - t.burst_since_ns > max_burst_ns_) {
      reason = "it has held memory past its cap for longer than the node's limit of " +
               std::to_string(max_burst_ns_ / 1'000'000'000) + "s";
    } else {
      asked_at_.erase(t.id);
      continue;
    }
    const CheckpointContract c = contract(t.id);
    const auto asked = asked_at_.find(t.id);
    if (asked == asked_at_.end() && c.has_signal) {
      asked_at_[t.id] = now_ns;
      decisions.push_back({t.id, BurstDecision::Action::kAsk, reason});
    } else if (asked == asked_at_.end() || now_ns - asked->second >= c.grace_ns) {
      decisions.push_back({t.id, BurstDecision::Action::kEvict,
                           "evicted: held " + FormatBytes(t.used - t.cap) + " of GPU memory past its cap of " +
                               FormatBytes(t.cap) + " and " + reason +
                               (c.has_signal ? "; it did not give it back within its grace period" : "")});
    }
  }
  for (auto it = asked_at_.begin(); it != asked_at_.end();) {
    it = bursting.contains(it->first) ? std::next(it) : asked_at_.erase(it);
  }
  *clear_reclaim = ledger.reclaim_wanted > 0 && bursting.empty();
  return decisions;
}

}  // namespace tessera::node

#include "model/job_array.h"

#include <algorithm>
#include <cctype>

namespace tessera::model {
namespace {

constexpr const char* kExamples = "write e.g. 0-99, 1,3,5-9 or 0-15:4";

// A non-negative decimal number of at most 9 digits (no sign, no spaces).
std::optional<std::int64_t> Number(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::int64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

Result<std::int64_t> Index(std::string_view text, std::string_view item) {
  const std::optional<std::int64_t> n = Number(text);
  if (!n) return InvalidArgument("'" + std::string(item) + "' is not an index or a range (" + kExamples + ")");
  if (*n > kMaxArrayIndex) {
    return InvalidArgument("index " + std::string(text) + " is above the largest, " + std::to_string(kMaxArrayIndex));
  }
  return *n;
}

// One comma-separated item: "7", "0-99" or "0-15:4".
struct Run {
  std::int64_t first, last, step;
};

Result<Run> Item(std::string_view item) {
  if (item.empty()) return InvalidArgument("an empty item between commas");
  const std::size_t dash = item.find('-');
  const std::size_t colon = item.find(':');
  if (dash == std::string_view::npos) {
    if (colon != std::string_view::npos) return InvalidArgument("'" + std::string(item) + "': a step needs a range, as in 0-15:4");
    const Result<std::int64_t> n = Index(item, item);
    if (!n.ok()) return n.status();
    return Run{*n, *n, 1};
  }
  const Result<std::int64_t> first = Index(item.substr(0, dash), item);
  if (!first.ok()) return first.status();
  const std::string_view rest = item.substr(dash + 1, colon == std::string_view::npos ? std::string_view::npos : colon - dash - 1);
  const Result<std::int64_t> last = Index(rest, item);
  if (!last.ok()) return last.status();
  std::int64_t step = 1;
  if (colon != std::string_view::npos) {
    const std::optional<std::int64_t> s = Number(item.substr(colon + 1));
    if (!s || *s < 1) return InvalidArgument("'" + std::string(item) + "': the step after ':' must be a whole number of at least 1");
    step = *s;
  }
  if (*last < *first) {
    return InvalidArgument("range " + std::string(item.substr(0, colon)) + " runs backwards: write " + std::to_string(*last) + "-" +
                           std::to_string(*first));
  }
  return Run{*first, *last, step};
}

Result<std::int32_t> Limit(std::string_view text) {
  const std::optional<std::int64_t> n = Number(text);
  if (!n) return InvalidArgument("'%" + std::string(text) + "': the limit after % must be a whole number");
  if (*n < 1) return InvalidArgument("'%" + std::string(text) + "': the limit must be at least 1");
  return static_cast<std::int32_t>(std::min<std::int64_t>(*n, kMaxArrayElements));
}

}  // namespace

std::optional<std::int32_t> JobArray::PositionOf(std::int32_t index) const {
  const auto it = std::lower_bound(indices.begin(), indices.end(), index);
  if (it == indices.end() || *it != index) return std::nullopt;
  return static_cast<std::int32_t>(it - indices.begin());
}

std::vector<std::pair<std::string, std::string>> JobArray::SweepValues(std::int32_t index) const {
  std::vector<std::pair<std::string, std::string>> values(sweep.size());
  // Mixed radix, the last parameter the fastest digit: the order of nested
  // loops over the parameters as written.
  for (std::size_t p = sweep.size(); p-- > 0;) {
    const auto n = static_cast<std::int32_t>(sweep[p].values.size());
    values[p] = {sweep[p].name, sweep[p].values[static_cast<std::size_t>(index % n)]};
    index /= n;
  }
  return values;
}

std::int32_t JobArray::Step() const {
  if (indices.size() < 2) return 1;
  const std::int32_t step = indices[1] - indices[0];
  for (std::size_t i = 2; i < indices.size(); ++i) {
    if (indices[i] - indices[i - 1] != step) return 1;
  }
  return step;
}

std::string JobArray::Describe() const {
  std::string text;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i) text += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return text;
}

Result<JobArray> ParseArrayRange(std::string_view text, bool limit_only) {
  JobArray array;
  const std::size_t percent = text.find('%');
  const std::string_view list = text.substr(0, percent);
  if (percent != std::string_view::npos) {
    const Result<std::int32_t> limit = Limit(text.substr(percent + 1));
    if (!limit.ok()) return limit.status();
    array.max_running = *limit;
  }
  if (limit_only) {
    if (!list.empty() || percent == std::string_view::npos) {
      return InvalidArgument("the indices come from the sweep: write only a limit, such as %4; got '" + std::string(text) + "'");
    }
    return array;
  }
  if (list.empty()) {
    return InvalidArgument((text.empty() ? std::string("no indices") : "'" + std::string(text) + "' names no indices") + ": " +
                           kExamples + ", and %N to run at most N at a time");
  }
  // Ranges are counted before they are expanded, so that "0-9999999" costs
  // nothing to refuse; overlapping ones are counted twice here and once below.
  std::vector<Run> items;
  std::int64_t listed = 0;
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    const Result<Run> item = Item(list.substr(start, comma - start));
    if (!item.ok()) return item.status();
    const auto [first, last, step] = *item;
    listed += (last - first) / step + 1;
    if (listed > std::int64_t{kMaxArrayElements} * 10) break;
    items.push_back(*item);
    start = comma + 1;
  }
  if (listed <= std::int64_t{kMaxArrayElements} * 10) {
    for (const auto& [first, last, step] : items) {
      for (std::int64_t i = first; i <= last; i += step) array.indices.push_back(static_cast<std::int32_t>(i));
    }
    std::sort(array.indices.begin(), array.indices.end());
    array.indices.erase(std::unique(array.indices.begin(), array.indices.end()), array.indices.end());
  }
  if (listed > std::int64_t{kMaxArrayElements} * 10 || array.size() > kMaxArrayElements) {
    const std::string count = array.indices.empty() ? "more than " + std::to_string(std::int64_t{kMaxArrayElements} * 10)
                                                    : std::to_string(array.size());
    return InvalidArgument("'" + std::string(list) + "' holds " + count + " indices; an array holds at most " +
                           std::to_string(kMaxArrayElements));
  }
  return array;
}

Result<std::int32_t> SweepCombinations(const std::vector<SweepParameter>& sweep) {
  // Each parameter has at most kMaxArrayElements values (the spec says so),
  // so the product is exact until it first exceeds the limit.
  std::int64_t product = 1;
  bool exact = true;
  std::string factors;
  for (const SweepParameter& p : sweep) {
    if (product > kMaxArrayElements) exact = false;
    product = std::min<std::int64_t>(product, kMaxArrayElements + 1) * static_cast<std::int64_t>(p.values.size());
    factors += (factors.empty() ? "" : " x ") + std::to_string(p.values.size());
  }
  if (product > kMaxArrayElements) {
    return InvalidArgument(factors + " = " + (exact ? std::to_string(product) : "more than " + std::to_string(kMaxArrayElements)) +
                           " combinations; a sweep holds at most " + std::to_string(kMaxArrayElements));
  }
  return static_cast<std::int32_t>(product);
}

std::string SweepVariable(std::string_view parameter) {
  std::string name = "TESSERA_SWEEP_";
  for (const char c : parameter) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace tessera::model

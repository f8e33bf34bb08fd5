#include "cli/slurm/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

namespace tessera::cli::slurm {
namespace {

// A name split into its prefix and trailing number; width > 0 only when the
// number is zero-padded and must keep its width.
struct Split {
  std::string prefix;
  std::string digits;
  bool numbered() const { return !digits.empty(); }
  std::size_t width() const { return digits.size() > 1 && digits[0] == '0' ? digits.size() : 0; }
};

Split SplitName(const std::string& name) {
  std::size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  // Numbers past 18 digits do not fit an int64: keep such names whole.
  if (name.size() - i > 18) i = name.size();
  return {name.substr(0, i), name.substr(i)};
}

std::string Pad(std::int64_t n, std::size_t width) {
  std::string s = std::to_string(n);
  return width > s.size() ? std::string(width - s.size(), '0') + s : s;
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& names) {
  // Groups by (prefix, width) in first-seen order.
  std::vector<std::pair<std::string, std::size_t>> order;
  std::map<std::pair<std::string, std::size_t>, std::vector<std::int64_t>> numbers;
  std::vector<std::string> plain;  // names without a number, each its own entry
  std::vector<std::pair<bool, std::size_t>> entries;  // (numbered group?, index)
  for (const std::string& name : names) {
    const Split s = SplitName(name);
    if (!s.numbered()) {
      if (std::find(plain.begin(), plain.end(), name) == plain.end()) {
        entries.push_back({false, plain.size()});
        plain.push_back(name);
      }
      continue;
    }
    const std::pair<std::string, std::size_t> key{s.prefix, s.width()};
    if (!numbers.contains(key)) {
      entries.push_back({true, order.size()});
      order.push_back(key);
    }
    numbers[key].push_back(std::stoll(s.digits));
  }
  std::string out;
  for (const auto& [numbered, index] : entries) {
    if (!out.empty()) out += ',';
    if (!numbered) {
      out += plain[index];
      continue;
    }
    const auto& key = order[index];
    std::vector<std::int64_t>& list = numbers[key];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    if (list.size() == 1) {
      out += key.first + Pad(list[0], key.second);
      continue;
    }
    out += key.first + '[';
    for (std::size_t i = 0; i < list.size();) {
      std::size_t j = i;
      while (j + 1 < list.size() && list[j + 1] == list[j] + 1) ++j;
      if (i > 0) out += ',';
      out += Pad(list[i], key.second);
      if (j > i) out += '-' + Pad(list[j], key.second);
      i = j + 1;
    }
    out += ']';
  }
  return out;
}

std::vector<std::string> ExpandHostlist(const std::string& list) {
  std::vector<std::string> names;
  std::size_t i = 0;
  while (i < list.size()) {
    // One entry: up to a comma outside brackets.
    std::size_t end = i;
    int depth = 0;
    while (end < list.size() && (depth > 0 || list[end] != ',')) {
      depth += list[end] == '[' ? 1 : list[end] == ']' ? -1 : 0;
      ++end;
    }
    const std::string entry = list.substr(i, end - i);
    i = end + 1;
    const std::size_t open = entry.find('[');
    if (open == std::string::npos || entry.back() != ']') {
      if (!entry.empty()) names.push_back(entry);
      continue;
    }
    const std::string prefix = entry.substr(0, open);
    const std::string ranges = entry.substr(open + 1, entry.size() - open - 2);
    for (std::size_t r = 0; r <= ranges.size();) {
      std::size_t comma = ranges.find(',', r);
      if (comma == std::string::npos) comma = ranges.size();
      const std::string range = ranges.substr(r, comma - r);
      r = comma + 1;
      const std::size_t dash = range.find('-');
      const std::string first = range.substr(0, dash);
      if (first.empty()) continue;
      const std::size_t width = first.size() > 1 && first[0] == '0' ? first.size() : 0;
      const std::int64_t from = std::stoll(first);
      const std::int64_t to = dash == std::string::npos ? from : std::stoll(range.substr(dash + 1));
      for (std::int64_t n = from; n <= to; ++n) names.push_back(prefix + Pad(n, width));
    }
  }
  return names;
}

}  // namespace tessera::cli::slurm

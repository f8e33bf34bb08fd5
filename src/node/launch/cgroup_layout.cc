#include "node/launch/cgroup_layout.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace tessera::node {
namespace {

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool Contains(const std::vector<std::string>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// mountinfo writes space, tab, newline and backslash in paths as \ooo (octal).
std::string Unescape(std::string_view text) {
  const auto octal = [&](std::size_t j) {
    return j < text.size() && text[j] >= '0' && text[j] <= '7';
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                               (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

struct Mount {
  std::string fs_type;  // "cgroup" (v1) or "cgroup2"
  std::string root;     // the part of the hierarchy this mount shows
  std::string mount_point;
  std::vector<std::string> super_options;  // v1: the controllers, among rw and friends
};

// Line format:
//   ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FS_TYPE SOURCE SUPER_OPTIONS
std::vector<Mount> ParseCgroupMounts(std::string_view mountinfo) {
  std::vector<Mount> mounts;
  for (std::string_view line : Split(mountinfo, '\n')) {
    const std::vector<std::string_view> fields = Split(line, ' ');
    const auto dash = std::find(fields.begin() + std::min<std::ptrdiff_t>(6, std::ssize(fields)),
                                fields.end(), "-");
    if (fields.end() - dash < 4) continue;
    const std::string_view fs_type = dash[1];
    if (fs_type != "cgroup" && fs_type != "cgroup2") continue;
    Mount mount{std::string(fs_type), Unescape(fields[3]), Unescape(fields[4]), {}};
    for (std::string_view option : Split(dash[3], ',')) mount.super_options.emplace_back(option);
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

// Our path seen through `mount`: nullopt when the mount does not show it.
std::optional<std::string> PathUnder(const Mount& mount, const std::string& path) {
  if (mount.root == "/") return path;
  if (path == mount.root) return "/";
  if (path.starts_with(mount.root + "/")) return path.substr(mount.root.size());
  return std::nullopt;
}

// Finds `path` (from /proc/self/cgroup) through the first mount that shows it.
CgroupDir Reach(const std::vector<const Mount*>& mounts, const std::string& path,
                const std::string& hierarchy) {
  for (const Mount* mount : mounts) {
    if (auto relative = PathUnder(*mount, path))
      return {mount->mount_point, std::move(*relative), ""};
  }
  if (mounts.empty()) return {};
  return {"", "",
          hierarchy + " hierarchy: our cgroup " + path + " lies outside its mount at " +
              mounts.front()->mount_point + " (which shows " + mounts.front()->root + ")"};
}

}  // namespace

CgroupLayout LocateCgroups(std::string_view mountinfo, std::string_view proc_self_cgroup) {
  const std::vector<Mount> mounts = ParseCgroupMounts(mountinfo);
  const auto mounts_where = [&](auto&& predicate) {
    std::vector<const Mount*> found;
    for (const Mount& mount : mounts) {
      if (predicate(mount)) found.push_back(&mount);
    }
    return found;
  };

  CgroupLayout layout;
  // Line format: HIERARCHY_ID:CONTROLLERS:PATH; the unified hierarchy is "0::PATH".
  for (std::string_view line : Split(proc_self_cgroup, '\n')) {
    const std::size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    const std::size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers_text = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));

    if (id == "0" && controllers_text.empty()) {
      layout.v2 = Reach(mounts_where([](const Mount& m) { return m.fs_type == "cgroup2"; }), path,
                        "cgroup2");
      continue;
    }
    std::vector<std::string> controllers;
    for (std::string_view c : Split(controllers_text, ',')) controllers.emplace_back(c);
    for (const auto& [name, target] :
         {std::pair{"cpu", &layout.v1_cpu}, std::pair{"memory", &layout.v1_memory}}) {
      if (!Contains(controllers, name)) continue;
      *target = Reach(mounts_where([&](const Mount& m) {
                        return m.fs_type == "cgroup" && Contains(m.super_options, name);
                      }),
                      path, std::string("v1 ") + name);
    }
  }
  return layout;
}

}  // namespace tessera::node

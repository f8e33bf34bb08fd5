#include "cli/slurm/sbatch_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "cli/slurm/slurm_time.h"
#include "model/job_array.h"

namespace tessera::cli::slurm {
namespace {

enum class Arg { kNone, kRequired, kOptional };
using Handler = Status (*)(SbatchOptions&, const std::string& value);

struct OptionSpec {
  const char* name;
  char short_name;
  Arg arg;
  Handler handler;  // null: a Tessera flag, kept in options.tessera
  bool tessera_only = false;
};

Result<std::int32_t> ReadCount(std::string_view text, std::int32_t minimum) {
  std::int32_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size() || n < minimum) {
    return InvalidArgument("'" + std::string(text) + "' is not a whole number of at least " + std::to_string(minimum));
  }
  return n;
}

// "4", "a100:4": an optional GPU type and a count.
Result<GpuCount> ReadGpus(std::string_view text) {
  GpuCount gpus;
  const std::size_t colon = text.rfind(':');
  if (colon != std::string_view::npos) {
    gpus.type = std::string(text.substr(0, colon));
    if (gpus.type.empty() || gpus.type.find(':') != std::string::npos) {
      return InvalidArgument("'" + std::string(text) + "' is not [type:]count");
    }
    text = text.substr(colon + 1);
  }
  Result<std::int32_t> n = ReadCount(text, 1);
  if (!n.ok()) return n.status();
  gpus.count = *n;
  return gpus;
}

template <auto Field>
Status SetCount(SbatchOptions& o, const std::string& v) {
  Result<std::int32_t> n = ReadCount(v, 1);
  if (!n.ok()) return n.status();
  o.*Field = *n;
  return {};
}

template <auto Field>
Status SetGpus(SbatchOptions& o, const std::string& v) {
  Result<GpuCount> g = ReadGpus(v);
  if (!g.ok()) return g.status();
  o.*Field = *g;
  return {};
}

template <auto Field>
Status SetText(SbatchOptions& o, const std::string& v) {
  if (v.empty()) return InvalidArgument("needs a value");
  o.*Field = v;
  return {};
}

template <auto Field>
Status SetSize(SbatchOptions& o, const std::string& v) {
  Result<std::int64_t> bytes = ParseSlurmSize(v);
  if (!bytes.ok()) return bytes.status();
  o.*Field = *bytes;
  return {};
}

Status SetNodes(SbatchOptions& o, const std::string& v) {
  // "2" or "2-2"; a range of node counts has no Tessera meaning (a gang is one size).
  const std::size_t dash = v.find('-');
  Result<std::int32_t> n = ReadCount(v.substr(0, dash), 1);
  if (!n.ok()) return n.status();
  if (dash != std::string::npos) {
    Result<std::int32_t> max = ReadCount(v.substr(dash + 1), 1);
    if (!max.ok()) return max.status();
    if (*max != *n) return InvalidArgument("a range of node counts is not supported: a Tessera gang has one size; give -N " + std::to_string(*max));
  }
  o.nodes = *n;
  return {};
}

// --gres=gpu[:type][:count][,...]: only GPUs are generic resources here.
Status SetGres(SbatchOptions& o, const std::string& v) {
  if (v == "none") {
    o.gres.reset();
    return {};
  }
  std::optional<GpuCount> total;
  for (std::size_t start = 0; start <= v.size();) {
    std::size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    std::string item = v.substr(start, comma - start);
    start = comma + 1;
    if (item.starts_with("gres/")) item = item.substr(5);
    if (item != "gpu" && !item.starts_with("gpu:")) {
      return InvalidArgument("'" + item + "': the only generic resource Tessera schedules is gpu (gpu[:type]:count)");
    }
    GpuCount g{"", 1};
    if (item != "gpu") {
      std::string rest = item.substr(4);
      if (rest.find(':') == std::string::npos && !rest.empty() && !std::isdigit(static_cast<unsigned char>(rest[0]))) {
        g.type = rest;  // gpu:a100, one of them
      } else {
        Result<GpuCount> parsed = ReadGpus(rest);
        if (!parsed.ok()) return parsed.status();
        g = *parsed;
      }
    }
    if (total && total->type != g.type) return InvalidArgument("GPUs of two types in one job: a Tessera task has one GPU model");
    if (total) g.count += total->count;
    total = g;
  }
  o.gres = total;
  return {};
}

Status SetTime(SbatchOptions& o, const std::string& v) {
  Result<std::int64_t> seconds = ParseSlurmTime(v);
  if (!seconds.ok()) return seconds.status();
  o.time_limit = *seconds;
  return {};
}

Status SetDependency(SbatchOptions& o, const std::string& v) {
  o.dependencies.clear();
  o.singleton = false;
  o.dependency_any = v.find('?') != std::string::npos;
  if (o.dependency_any && v.find(',') != std::string::npos) return InvalidArgument("mixes ',' (all) and '?' (any)");
  const char separator = o.dependency_any ? '?' : ',';
  for (std::size_t start = 0; start <= v.size();) {
    std::size_t end = v.find(separator, start);
    if (end == std::string::npos) end = v.size();
    const std::string item = v.substr(start, end - start);
    start = end + 1;
    if (item == "singleton") {
      o.singleton = true;
      continue;
    }
    const std::size_t colon = item.find(':');
    const std::string type = item.substr(0, colon);
    SbatchDependency::Kind kind;
    if (type == "afterok") {
      kind = SbatchDependency::Kind::kAfterOk;
    } else if (type == "afterany") {
      kind = SbatchDependency::Kind::kAfterAny;
    } else if (type == "afternotok") {
      kind = SbatchDependency::Kind::kAfterNotOk;
    } else if (type == "after" || type == "aftercorr" || type == "afterburstbuffer") {
      return InvalidArgument("'" + type + "' is not supported (afterok, afterany, afternotok and singleton are)");
    } else {
      return InvalidArgument("'" + item + "' is not a dependency (afterok:ID, afterany:ID, afternotok:ID or singleton)");
    }
    if (colon == std::string::npos) return InvalidArgument("'" + item + "' names no job: write " + type + ":JOBID");
    for (std::size_t s = colon + 1; s <= item.size();) {
      std::size_t e = item.find(':', s);
      if (e == std::string::npos) e = item.size();
      std::string id = item.substr(s, e - s);
      s = e + 1;
      if (id.find('+') != std::string::npos) return InvalidArgument("'" + id + "': a time offset (+MINUTES) is not supported");
      if (id.find('_') != std::string::npos) {
        return InvalidArgument("'" + id + "': a dependency on one element of an array is not supported: depend on the whole array (" +
                               id.substr(0, id.find('_')) + ")");
      }
      std::int64_t job = 0;
      const auto [p, error] = std::from_chars(id.data(), id.data() + id.size(), job);
      if (error != std::errc() || p != id.data() + id.size() || job < 0) return InvalidArgument("'" + id + "' is not a job id");
      o.dependencies.push_back({kind, job});
    }
  }
  if (o.dependency_any && o.dependencies.size() + (o.singleton ? 1 : 0) > 1) {
    return InvalidArgument("'?' (any one of several dependencies) is not supported: Tessera waits for all of them");
  }
  return {};
}

Status SetExclusive(SbatchOptions& o, const std::string& v) {
  if (!v.empty() && v != "exclusive") return InvalidArgument("--exclusive=" + v + " is not supported; plain --exclusive is");
  o.exclusive = true;
  return {};
}

Status SetRequeue(SbatchOptions& o, const std::string&) {
  o.requeue = true;
  return {};
}
Status SetNoRequeue(SbatchOptions& o, const std::string&) {
  o.requeue = false;
  return {};
}

Status SetSignal(SbatchOptions& o, const std::string& v) {
  SignalSpec s;
  std::string text = v;
  if (text.starts_with("B:")) {
    s.batch_only = true;
    text = text.substr(2);
  } else if (text.starts_with("R:") || text.starts_with("RB:") || text.starts_with("BR:")) {
    return InvalidArgument("'R' (reservation end) is not supported");
  }
  const std::size_t at = text.find('@');
  std::string sig = text.substr(0, at);
  if (at != std::string::npos) {
    Result<std::int32_t> seconds = ReadCount(text.substr(at + 1), 1);
    if (!seconds.ok()) return seconds.status();
    s.seconds = *seconds;
  }
  for (char& c : sig) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::string> kByNumber = {{"1", "SIGHUP"}, {"2", "SIGINT"}, {"10", "SIGUSR1"},
                                                               {"12", "SIGUSR2"}, {"15", "SIGTERM"}};
  if (const auto it = kByNumber.find(sig); it != kByNumber.end()) sig = it->second;
  if (!sig.starts_with("SIG")) sig = "SIG" + sig;
  static const std::vector<std::string> kAllowed = {"SIGUSR1", "SIGUSR2", "SIGTERM", "SIGINT", "SIGHUP"};
  if (std::find(kAllowed.begin(), kAllowed.end(), sig) == kAllowed.end()) {
    return InvalidArgument("'" + sig + "' cannot be a checkpoint signal (SIGUSR1, SIGUSR2, SIGTERM, SIGINT or SIGHUP)");
  }
  s.name = sig;
  o.signal = s;
  return {};
}

Status SetOpenMode(SbatchOptions& o, const std::string& v) {
  if (v != "append" && v != "truncate") return InvalidArgument("'" + v + "' is not append or truncate");
  o.open_mode = v;
  return {};
}

Status SetExport(SbatchOptions& o, const std::string& v) {
  if (v.empty()) return InvalidArgument("needs ALL, NONE or NAME[=VALUE] list");
  o.export_spec = v;
  return {};
}

Status SetKillOnInvalidDep(SbatchOptions&, const std::string& v) {
  // Tessera never starts a job whose dependency can no longer be satisfied, and says so.
  if (v != "yes") return InvalidArgument("only 'yes' is supported: a job whose dependency failed never starts");
  return {};
}

Status SetArray(SbatchOptions& o, const std::string& v) {
  if (Result<model::JobArray> array = model::ParseArrayRange(v); !array.ok()) return array.status();
  o.array = v;
  return {};
}

Status Ignore(SbatchOptions&, const std::string&) { return {}; }

const std::vector<OptionSpec>& Options() {
  static const std::vector<OptionSpec> kOptions = {
      {"nodes", 'N', Arg::kRequired, SetNodes},
      {"ntasks", 'n', Arg::kRequired, SetCount<&SbatchOptions::ntasks>},
      {"ntasks-per-node", 0, Arg::kRequired, SetCount<&SbatchOptions::ntasks_per_node>},
      {"tasks-per-node", 0, Arg::kRequired, SetCount<&SbatchOptions::ntasks_per_node>},
      {"gres", 0, Arg::kRequired, SetGres},
      {"gpus", 'G', Arg::kRequired, SetGpus<&SbatchOptions::gpus>},
      {"gpus-per-node", 0, Arg::kRequired, SetGpus<&SbatchOptions::gpus_per_node>},
      {"gpus-per-task", 0, Arg::kRequired, SetGpus<&SbatchOptions::gpus_per_task>},
      {"cpus-per-task", 'c', Arg::kRequired, SetCount<&SbatchOptions::cpus_per_task>},
      {"cpus-per-gpu", 0, Arg::kRequired, SetCount<&SbatchOptions::cpus_per_gpu>},
      {"mem", 0, Arg::kRequired, SetSize<&SbatchOptions::mem>},
      {"mem-per-gpu", 0, Arg::kRequired, SetSize<&SbatchOptions::mem_per_gpu>},
      {"mem-per-cpu", 0, Arg::kRequired, SetSize<&SbatchOptions::mem_per_cpu>},
      {"time", 't', Arg::kRequired, SetTime},
      {"partition", 'p', Arg::kRequired, SetText<&SbatchOptions::partition>},
      {"account", 'A', Arg::kRequired, SetText<&SbatchOptions::account>},
      {"qos", 'q', Arg::kRequired, SetText<&SbatchOptions::qos>},
      {"job-name", 'J', Arg::kRequired, SetText<&SbatchOptions::job_name>},
      {"output", 'o', Arg::kRequired, SetText<&SbatchOptions::output>},
      {"error", 'e', Arg::kRequired, SetText<&SbatchOptions::error>},
      {"open-mode", 0, Arg::kRequired, SetOpenMode},
      {"dependency", 'd', Arg::kRequired, SetDependency},
      {"kill-on-invalid-dep", 0, Arg::kRequired, SetKillOnInvalidDep},
      {"exclusive", 0, Arg::kOptional, SetExclusive},
      {"constraint", 'C', Arg::kRequired, SetText<&SbatchOptions::constraint>},
      {"requeue", 0, Arg::kNone, SetRequeue},
      {"no-requeue", 0, Arg::kNone, SetNoRequeue},
      {"signal", 0, Arg::kRequired, SetSignal},
      {"chdir", 'D', Arg::kRequired, SetText<&SbatchOptions::chdir>},
      {"export", 0, Arg::kRequired, SetExport},
      {"wrap", 0, Arg::kRequired, SetText<&SbatchOptions::wrap>},
      {"array", 'a', Arg::kRequired, SetArray},
      // Accepted and without effect: Tessera behaves so anyway.
      {"verbose", 'v', Arg::kNone, Ignore},
      {"quiet", 'Q', Arg::kNone, Ignore},
      // Tessera's own, on the command line only.
      {"ignore-unknown", 0, Arg::kNone, nullptr, true},
      {"dry-run", 0, Arg::kNone, nullptr, true},
      {"json", 0, Arg::kNone, nullptr, true},
      {"parsable", 0, Arg::kNone, nullptr, true},
      {"server", 0, Arg::kRequired, nullptr, true},
      {"token-file", 0, Arg::kRequired, nullptr, true},
      {"ca-file", 0, Arg::kRequired, nullptr, true},
      {"cert-file", 0, Arg::kRequired, nullptr, true},
      {"key-file", 0, Arg::kRequired, nullptr, true},
  };
  return kOptions;
}

// Slurm options Tessera knows but cannot honour, and why.
struct Refusal {
  const char* name;
  char short_name;
  Arg arg;
  const char* why;
};
const std::vector<Refusal>& Refusals() {
  static const std::vector<Refusal> kRefusals = {
      {"mail-type", 0, Arg::kRequired, "Tessera sends no mail (watch the job with tessera jobs, or its events)"},
      {"mail-user", 0, Arg::kRequired, "Tessera sends no mail"},
      {"nodelist", 'w', Arg::kRequired, "Tessera places gangs itself; nodes cannot be named"},
      {"exclude", 'x', Arg::kRequired, "Tessera places gangs itself; cordon a node instead (tessera nodes cordon)"},
      {"begin", 'b', Arg::kRequired, "a deferred start is not supported"},
      {"deadline", 0, Arg::kRequired, "deadlines are not supported"},
      {"reservation", 0, Arg::kRequired, "reservations do not exist in Tessera"},
      {"licenses", 'L', Arg::kRequired, "licenses do not exist in Tessera"},
      {"hold", 'H', Arg::kNone, "held jobs are not supported"},
      {"nice", 0, Arg::kOptional, "use --qos for a priority"},
      {"priority", 0, Arg::kRequired, "use --qos for a priority"},
      {"hint", 0, Arg::kRequired, "CPU binding hints are not supported"},
      {"threads-per-core", 0, Arg::kRequired, "CPU binding is not supported"},
      {"cores-per-socket", 0, Arg::kRequired, "CPU binding is not supported"},
      {"sockets-per-node", 0, Arg::kRequired, "CPU binding is not supported"},
      {"mem-bind", 0, Arg::kRequired, "memory binding is not supported"},
      {"gpu-bind", 0, Arg::kRequired, "GPU binding is not supported: each node's tasks see the node's GPUs"},
      {"switches", 0, Arg::kRequired, "write a topology constraint in a Job file instead (spec.topology)"},
      {"container", 0, Arg::kRequired, "containers are not supported by sbatch here"},
      {"uid", 0, Arg::kRequired, "jobs run as their submitter"},
      {"gid", 0, Arg::kRequired, "jobs run as their submitter"},
      {"get-user-env", 0, Arg::kOptional, "use --export"},
      {"wait", 'W', Arg::kNone, "not supported: follow the job with tessera logs -f"},
      {"test-only", 0, Arg::kNone, "use --dry-run"},
      {"overcommit", 'O', Arg::kNone, "overcommit is not supported"},
      {"oversubscribe", 's', Arg::kNone, "oversubscription is not supported"},
      {"comment", 0, Arg::kRequired, "comments are not kept"},
      {"clusters", 'M', Arg::kRequired, "one Tessera server is one cluster"},
      {"spread-job", 0, Arg::kNone, "Tessera places gangs itself"},
      {"distribution", 'm', Arg::kRequired, "task distribution is srun's, and always block here"},
      {"cpus-per-gpu-bind", 0, Arg::kRequired, "CPU binding is not supported"},
      {"time-min", 0, Arg::kRequired, "a flexible time limit is not supported"},
      {"tmp", 0, Arg::kRequired, "local disk is not a Tessera resource"},
      {"mincpus", 0, Arg::kRequired, "use --cpus-per-task"},
      {"input", 'i', Arg::kRequired, "batch steps read no input"},
  };
  return kRefusals;
}

template <typename Spec>
const Spec* Find(const std::vector<Spec>& specs, std::string_view long_name, char short_name) {
  for (const Spec& s : specs) {
    if (short_name != 0 ? s.short_name == short_name : long_name == s.name) return &s;
  }
  return nullptr;
}

Status At(const Word& word, const std::string& option, const Status& status) {
  return {status.code(), word.where + ": " + option + ": " + status.message()};
}

}  // namespace

Result<std::int64_t> ParseSlurmSize(std::string_view text) {
  const auto bad = [&] {
    return InvalidArgument("'" + std::string(text) + "' is not a size (a number of megabytes, or with K, M, G or T)");
  };
  if (text.empty()) return bad();
  std::int64_t unit = std::int64_t{1} << 20;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (std::isalpha(static_cast<unsigned char>(last))) {
    switch (last) {
      case 'K': unit = std::int64_t{1} << 10; break;
      case 'M': unit = std::int64_t{1} << 20; break;
      case 'G': unit = std::int64_t{1} << 30; break;
      case 'T': unit = std::int64_t{1} << 40; break;
      default: return bad();
    }
    text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return bad();
  return static_cast<std::int64_t>(value * static_cast<double>(unit));
}

Result<std::vector<Word>> ScanDirectives(std::string_view script, const std::string& file) {
  std::vector<Word> words;
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < script.size();) {
    std::size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;  // blank
    line = line.substr(first);
    if (line[0] != '#') break;  // the first command ends the directives
    if (!line.starts_with("#SBATCH")) continue;  // a comment (the shebang included)
    line.remove_prefix(7);
    if (!line.empty() && line[0] != ' ' && line[0] != '\t') continue;  // "#SBATCHX" is a comment
    const std::string where = file + ":" + std::to_string(line_no);
    // Words, with '...' and "..." quoting; an unquoted '#' starts a comment.
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quote) {
        if (c == quote) {
          quote = 0;
        } else {
          word += c;
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        in_word = true;
      } else if (c == ' ' || c == '\t') {
        if (in_word) words.push_back({word, where});
        word.clear();
        in_word = false;
      } else if (c == '#' && !in_word) {
        break;
      } else {
        word += c;
        in_word = true;
      }
    }
    if (quote) return InvalidArgument(where + ": unterminated " + std::string(1, quote) + " quote");
    if (in_word) words.push_back({word, where});
  }
  return words;
}

OptionWord SplitOptionWord(const std::string& w) {
  OptionWord o;
  if (w.starts_with("--")) {
    const std::size_t eq = w.find('=');
    o.name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (eq != std::string::npos) o.value = w.substr(eq + 1);
  } else if (w.size() >= 2) {
    o.short_name = w[1];
    if (w.size() > 2) o.value = w.substr(w[2] == '=' ? 3 : 2);
  }
  return o;
}

bool WantsIgnoreUnknown(const std::vector<std::string>& argv) {
  return std::find(argv.begin(), argv.end(), "--ignore-unknown") != argv.end();
}

Result<Parsed> ApplyOptions(const std::vector<Word>& words, bool command_line, bool ignore_unknown, SbatchOptions* options) {
  Parsed parsed;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const Word& word = words[i];
    const std::string& w = word.text;
    if (w.size() < 2 || w[0] != '-' || w == "--") {
      if (!command_line) return InvalidArgument(word.where + ": '" + w + "' is not an option (a directive holds options only)");
      for (std::size_t j = (w == "--" ? i + 1 : i); j < words.size(); ++j) parsed.positionals.push_back(words[j].text);
      return parsed;
    }
    auto [name, short_name, value] = SplitOptionWord(w);
    const OptionSpec* spec = Find(Options(), name, short_name);
    const Refusal* refusal = spec ? nullptr : Find(Refusals(), name, short_name);
    const Arg arg = spec ? spec->arg : refusal ? refusal->arg : Arg::kNone;
    if (spec || refusal) {
      name = spec ? spec->name : refusal->name;
      // The value may be the next word.
      if (!value && arg == Arg::kRequired) {
        if (i + 1 >= words.size() || words[i + 1].where != word.where) {
          return InvalidArgument(word.where + ": --" + name + " needs a value");
        }
        value = words[++i].text;
      }
      if (value && arg == Arg::kNone) return InvalidArgument(word.where + ": --" + name + " takes no value");
    }
    const std::string shown = spec || refusal ? "--" + name + (value ? "=" + *value : "") : w;
    if (!spec) {
      const std::string why = refusal ? std::string(refusal->why) : "not an sbatch option Tessera knows";
      const std::string message = word.where + ": " + shown + ": " + why;
      if (!ignore_unknown) return InvalidArgument(message + " (--ignore-unknown warns instead)");
      parsed.warnings.push_back(message + "; ignored");
      continue;
    }
    if (spec->tessera_only) {
      if (!command_line) return InvalidArgument(word.where + ": --" + name + " is a flag of tessera sbatch, not a directive");
      options->tessera[name] = value.value_or("");
      continue;
    }
    if (Status s = spec->handler(*options, value.value_or("")); !s.ok()) return At(word, shown, s);
    options->origin[name] = word.where;
  }
  return parsed;
}

}  // namespace tessera::cli::slurm

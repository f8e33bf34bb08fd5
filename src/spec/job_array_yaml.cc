#include "spec/job_array_yaml.h"

#include <cctype>
#include <map>
#include <memory>
#include <string>

namespace tessera::spec {
namespace {

constexpr std::int64_t kMaxRangeValue = 1'000'000'000'000;

bool IsParameterName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// A range of whole numbers, {from, to, step}: both ends included.
Result<std::vector<std::string>> RangeValues(const YamlValue& value) {
  Result<YamlMap> range = YamlMap::Read(value, {"from", "to", "step"}, {"from", "to"});
  if (!range.ok()) return range.status();
  std::int64_t from = 0, to = 0, step = 1;
  TESSERA_RETURN_IF_ERROR(range->ReadInt("from", &from, -kMaxRangeValue, kMaxRangeValue));
  TESSERA_RETURN_IF_ERROR(range->ReadInt("to", &to, -kMaxRangeValue, kMaxRangeValue));
  TESSERA_RETURN_IF_ERROR(range->ReadInt("step", &step, -kMaxRangeValue, kMaxRangeValue));
  if (step < 1) return range->Get("step")->Error("must be at least 1, got " + std::to_string(step));
  if (to < from) return range->Get("to")->Error("to (" + std::to_string(to) + ") is below from (" + std::to_string(from) + ")");
  const std::int64_t count = (to - from) / step + 1;
  if (count > model::kMaxArrayElements) {
    return value.Error("holds " + std::to_string(count) + " values; a parameter holds at most " + std::to_string(model::kMaxArrayElements));
  }
  std::vector<std::string> values;
  for (std::int64_t v = from; v <= to; v += step) values.push_back(std::to_string(v));
  return values;
}

Result<std::vector<std::string>> ListValues(const YamlValue& value) {
  Result<std::vector<YamlValue>> items = value.Items();
  if (!items.ok()) return items.status();
  if (items->empty()) return value.Error("a parameter needs at least one value");
  if (items->size() > static_cast<std::size_t>(model::kMaxArrayElements)) {
    return value.Error("holds " + std::to_string(items->size()) + " values; a parameter holds at most " +
                       std::to_string(model::kMaxArrayElements));
  }
  std::vector<std::string> values;
  for (const YamlValue& item : *items) {
    Result<std::string> text = item.String();
    if (!text.ok()) return text.status();
    values.push_back(std::move(*text));
  }
  return values;
}

Result<std::vector<model::SweepParameter>> ReadSweep(const YamlValue& value) {
  Result<YamlMap> sweep = YamlMap::Read(value);
  if (!sweep.ok()) return sweep.status();
  if (sweep->Keys().empty()) return value.Error("name at least one parameter, e.g. {lr: [0.1, 0.01]}");
  std::vector<model::SweepParameter> parameters;
  std::map<std::string, std::string> variables;  // variable -> the parameter that has it
  for (const std::string& name : sweep->Keys()) {
    const YamlValue parameter = *sweep->Get(name);
    if (!IsParameterName(name)) {
      return parameter.Error("'" + name + "' is not a parameter name: letters, digits and '_', not starting with a digit");
    }
    const std::string variable = model::SweepVariable(name);
    if (auto [it, inserted] = variables.emplace(variable, name); !inserted) {
      return parameter.Error("'" + it->second + "' and '" + name + "' would both be " + variable);
    }
    Result<std::vector<std::string>> values =
        parameter.node().IsSequence() ? ListValues(parameter)
        : parameter.node().IsMap()    ? RangeValues(parameter)
                                      : Result<std::vector<std::string>>(parameter.Error(
                                            "expected a list of values or a range {from, to, step}, got " + parameter.Describe()));
    if (!values.ok()) return values.status();
    parameters.push_back({name, std::move(*values)});
  }
  return parameters;
}

}  // namespace

Status ParseJobArray(const YamlMap& spec, model::Job& job) {
  const std::optional<YamlValue> array_value = spec.Find("array");
  const std::optional<YamlValue> sweep_value = spec.Find("sweep");
  if (!array_value && !sweep_value) return Status::Ok();
  model::JobArray array;
  if (array_value) {
    Result<std::string> text = array_value->String();
    if (!text.ok()) return text.status();
    Result<model::JobArray> parsed = model::ParseArrayRange(*text, /*limit_only=*/sweep_value.has_value());
    if (!parsed.ok()) return array_value->Error(parsed.status().message());
    array = std::move(*parsed);
  }
  if (sweep_value) {
    Result<std::vector<model::SweepParameter>> sweep = ReadSweep(*sweep_value);
    if (!sweep.ok()) return sweep.status();
    const Result<std::int32_t> combinations = model::SweepCombinations(*sweep);
    if (!combinations.ok()) return sweep_value->Error(combinations.status().message());
    array.sweep = std::move(*sweep);
    for (std::int32_t i = 0; i < *combinations; ++i) array.indices.push_back(i);
  }
  job.array = std::make_shared<const model::JobArray>(std::move(array));
  job.is_array_parent = true;
  return Status::Ok();
}

}  // namespace tessera::spec

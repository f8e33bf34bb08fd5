#include "model/image_reference.h"

#include <filesystem>

namespace tessera::model {

namespace {

constexpr std::string_view kDockerHub = "docker.io";
constexpr std::string_view kOciPrefix = "oci:";
constexpr std::size_t kMaxNameLength = 255;  // host/repository, as Docker limits it
constexpr std::size_t kMaxTagLength = 128;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// One component of a repository path, as Docker's grammar has it: lowercase
// alphanumerics, separated by one '.', one '_', "__" or a run of '-'.
bool IsPathComponent(std::string_view c) {
  if (c.empty() || !IsLowerAlnum(c.front()) || !IsLowerAlnum(c.back())) return false;
  for (std::size_t i = 0; i < c.size();) {
    if (IsLowerAlnum(c[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < c.size() && !IsLowerAlnum(c[i])) ++i;
    const std::string_view separator = c.substr(start, i - start);
    const bool dashes = separator.find_first_not_of('-') == std::string_view::npos;
    if (separator != "." && separator != "_" && separator != "__" && !dashes) return false;
  }
  return true;
}

// host[:port]: DNS labels (letters, digits, inner '-') separated by '.', or an
// IPv4 address, which that grammar covers too.
bool IsRegistryHost(std::string_view host) {
  const std::size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (!IsDigit(c)) return false;
    }
    if (std::stoi(std::string(port)) > 65535) return false;
    host = host.substr(0, colon);
  }
  if (host.empty()) return false;
  for (std::size_t start = 0; start <= host.size();) {
    std::size_t dot = host.find('.', start);
    if (dot == std::string_view::npos) dot = host.size();
    const std::string_view label = host.substr(start, dot - start);
    if (label.empty() || !IsAlnum(label.front()) || !IsAlnum(label.back())) return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    start = dot + 1;
  }
  return true;
}

// [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
Status CheckTag(std::string_view whole, std::string_view tag) {
  if (tag.empty()) return InvalidArgument("image reference " + Quoted(whole) + ": empty tag after ':'");
  if (tag.size() > kMaxTagLength) {
    return InvalidArgument("image reference " + Quoted(whole) + ": tag is " + std::to_string(tag.size()) +
                           " characters long, at most " + std::to_string(kMaxTagLength) + " are allowed");
  }
  const auto word = [](char c) { return IsAlnum(c) || c == '_'; };
  if (!word(tag.front())) {
    return InvalidArgument("image reference " + Quoted(whole) + ": tag " + Quoted(tag) +
                           " must start with a letter, a digit or '_'");
  }
  for (char c : tag) {
    if (!word(c) && c != '.' && c != '-') {
      return InvalidArgument("image reference " + Quoted(whole) + ": tag " + Quoted(tag) +
                             " may hold only letters, digits, '_', '.' and '-'");
    }
  }
  return Status::Ok();
}

Status CheckDigest(std::string_view whole, std::string_view digest) {
  const std::string prefix = "image reference " + Quoted(whole) + ": digest " + Quoted(digest);
  const std::size_t colon = digest.find(':');
  if (colon == std::string_view::npos) return InvalidArgument(prefix + " must be sha256:<64 hex digits>");
  if (digest.substr(0, colon) != "sha256") {
    return InvalidArgument(prefix + ": only sha256 digests are supported");
  }
  const std::string_view hex = digest.substr(colon + 1);
  if (hex.size() != 64) {
    return InvalidArgument(prefix + " has " + std::to_string(hex.size()) + " hex digits after sha256:, a sha256 digest has 64");
  }
  for (char c : hex) {
    if (!IsLowerHex(c)) {
      return InvalidArgument(prefix + " must be lowercase hex after sha256: (found " + Quoted(std::string(1, c)) + ")");
    }
  }
  return Status::Ok();
}

// Splits "...@sha256:hex" off `rest`, checking the digest.
Result<std::string> TakeDigest(std::string_view whole, std::string_view& rest) {
  const std::size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return std::string();
  const std::string_view digest = rest.substr(at + 1);
  if (digest.empty()) return InvalidArgument("image reference " + Quoted(whole) + ": empty digest after '@'");
  TESSERA_RETURN_IF_ERROR(CheckDigest(whole, digest));
  rest = rest.substr(0, at);
  return std::string(digest);
}

Result<ImageReference> ParseOciLayout(std::string_view whole) {
  std::string_view rest = whole.substr(kOciPrefix.size());
  Result<std::string> digest = TakeDigest(whole, rest);
  if (!digest.ok()) return digest.status();
  ImageReference ref;
  ref.kind = ImageReference::Kind::kOciLayout;
  ref.digest = std::move(*digest);
  const std::size_t colon = rest.find(':');
  const std::string_view path = rest.substr(0, colon);
  ref.tag = colon == std::string_view::npos ? "latest" : std::string(rest.substr(colon + 1));
  TESSERA_RETURN_IF_ERROR(CheckTag(whole, ref.tag));
  if (path.empty()) return InvalidArgument("image reference " + Quoted(whole) + ": no layout path after \"oci:\"");
  if (path.front() != '/') {
    return InvalidArgument("image reference " + Quoted(whole) + ": layout path " + Quoted(path) +
                           " must be absolute (the agent's working directory is not the task's)");
  }
  ref.path = std::filesystem::path(path).lexically_normal().string();
  if (ref.path.size() > 1 && ref.path.back() == '/') ref.path.pop_back();
  return ref;
}

Result<ImageReference> ParseRegistry(std::string_view whole) {
  if (whole.find("://") != std::string_view::npos) {
    return InvalidArgument("image reference " + Quoted(whole) +
                           ": write it without a scheme (\"registry.example.com/repo:tag\", not \"docker://...\")");
  }
  std::string_view rest = whole;
  Result<std::string> digest = TakeDigest(whole, rest);
  if (!digest.ok()) return digest.status();
  ImageReference ref;
  ref.digest = std::move(*digest);

  // A ':' after the last '/' starts the tag; one before it is a registry port.
  const std::size_t slash = rest.rfind('/');
  const std::size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    ref.tag = std::string(rest.substr(colon + 1));
    TESSERA_RETURN_IF_ERROR(CheckTag(whole, ref.tag));
    rest = rest.substr(0, colon);
  } else if (!ref.pinned()) {
    ref.tag = "latest";
  }
  if (rest.empty()) return InvalidArgument("image reference " + Quoted(whole) + ": no repository name");

  const std::size_t first_slash = rest.find('/');
  const std::string_view first = rest.substr(0, first_slash);
  const bool has_host = first_slash != std::string_view::npos &&
                        (first.find_first_of(".:") != std::string_view::npos || first == "localhost");
  std::string repository;
  if (has_host) {
    if (!IsRegistryHost(first)) {
      return InvalidArgument("image reference " + Quoted(whole) + ": registry " + Quoted(first) +
                             " is not a host name or IPv4 address with an optional port");
    }
    ref.registry = std::string(first);
    repository = std::string(rest.substr(first_slash + 1));
  } else {
    ref.registry = std::string(kDockerHub);
    repository = std::string(rest);
  }
  if (ref.registry == "index.docker.io") ref.registry = std::string(kDockerHub);
  if (ref.registry == kDockerHub && repository.find('/') == std::string::npos) repository = "library/" + repository;

  for (std::size_t start = 0; start <= repository.size();) {
    std::size_t end = repository.find('/', start);
    if (end == std::string::npos) end = repository.size();
    const std::string_view component = std::string_view(repository).substr(start, end - start);
    if (component.empty()) {
      return InvalidArgument("image reference " + Quoted(whole) + ": empty path component in repository " +
                             Quoted(repository) + " (a '//' or a trailing '/')");
    }
    for (char c : component) {
      if (c >= 'A' && c <= 'Z') {
        return InvalidArgument("image reference " + Quoted(whole) + ": repository " + Quoted(repository) +
                               " must be lowercase");
      }
    }
    if (!IsPathComponent(component)) {
      return InvalidArgument("image reference " + Quoted(whole) + ": repository component " + Quoted(component) +
                             " may hold only lowercase letters and digits, separated by '.', '_', '__' or '-'");
    }
    start = end + 1;
  }
  if (ref.registry.size() + 1 + repository.size() > kMaxNameLength) {
    return InvalidArgument("image reference " + Quoted(whole) + ": the name is longer than " +
                           std::to_string(kMaxNameLength) + " characters");
  }
  ref.repository = std::move(repository);
  return ref;
}

}  // namespace

std::string ImageReference::Canonical() const {
  std::string text = kind == Kind::kOciLayout ? std::string(kOciPrefix) + path : registry + "/" + repository;
  if (!tag.empty()) text += ":" + tag;
  if (pinned()) text += "@" + digest;
  return text;
}

std::string ImageReference::SkopeoSource() const {
  if (kind == Kind::kOciLayout) return std::string(kOciPrefix) + path + ":" + tag;
  const std::string name = "docker://" + registry + "/" + repository;
  return pinned() ? name + "@" + digest : name + ":" + tag;
}

Result<ImageReference> ParseImageReference(std::string_view text) {
  if (text.empty()) return InvalidArgument("image reference is empty");
  if (text.find_first_of(" \t\r\n\v\f") != std::string_view::npos) {
    return InvalidArgument("image reference " + Quoted(text) + " contains whitespace");
  }
  if (text.substr(0, kOciPrefix.size()) == kOciPrefix) return ParseOciLayout(text);
  return ParseRegistry(text);
}

}  // namespace tessera::model

// Which image a task runs from: a reference as users write it, parsed into
// the parts the image store needs (where to copy it from, how to name it in
// the node's cache, whether it is pinned to one manifest).
//
// Two kinds of reference:
//   registry    host[:port]/repo[/more][:tag][@sha256:<64 hex>]
//               Docker's rules decide whether the first component is a
//               registry host: it is when the reference has a '/' after it and
//               it holds a '.' or a ':' or is "localhost". Otherwise the image
//               is on Docker Hub: "busybox" is docker.io/library/busybox,
//               "acme/tool" is docker.io/acme/tool. Without a digest the tag
//               defaults to "latest"; with one, a tag is kept only if written
//               (registries resolve the digest and ignore the tag).
//   OCI layout  oci:PATH[:tag][@sha256:<64 hex>]
//               an OCI image layout directory on the node (PATH absolute, no
//               ':' in it: skopeo's oci: transport splits at the first one).
//               The tag defaults to "latest". skopeo selects images in a layout
//               by tag only, so a digest here is a pin the store checks after
//               the copy.
//
// Only sha256 digests are accepted: the only algorithm registries and the OCI
// layouts written by skopeo and umoci use.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace tessera::model {

struct ImageReference {
  enum class Kind { kRegistry, kOciLayout };
  Kind kind = Kind::kRegistry;
  std::string registry;    // kRegistry: "docker.io", "registry.example.com:5000", "localhost"
  std::string repository;  // kRegistry: "library/busybox"
  std::string path;        // kOciLayout: the layout directory, absolute and lexically normal
  std::string tag;         // "" only for a registry reference pinned by digest without a tag
  std::string digest;      // "sha256:<64 lowercase hex>", or "" when not pinned

  // Pinned to one manifest: the same reference names the same content forever.
  bool pinned() const { return !digest.empty(); }

  // The reference with every default written out, one spelling per image:
  // "docker.io/library/busybox:latest", "127.0.0.1:5000/test/busybox@sha256:...",
  // "oci:/srv/images/layout:v1". Parsing it again gives the same reference.
  std::string Canonical() const;

  // skopeo's source argument: "docker://host/repo:tag", or
  // "docker://host/repo@sha256:..." when pinned (skopeo refuses both at once),
  // or "oci:PATH:tag".
  std::string SkopeoSource() const;
};

// Parses `text`; an InvalidArgument says what is wrong with it and where.
Result<ImageReference> ParseImageReference(std::string_view text);

}  // namespace tessera::model

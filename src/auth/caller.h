// Who is asking: the identity the server's authentication found for a
// request, handed to every service call (controlplane/control_plane.h).
#pragma once

#include <optional>
#include <string>

#include "auth/roles.h"

namespace tessera::auth {

struct Caller {
  std::string user;
  std::optional<Role> role;  // none: no token was presented
  std::string token_id;
  bool authenticated = false;

  bool Is(Role r) const { return role == r; }
  std::string_view RoleName() const { return role ? ToString(*role) : std::string_view(); }
};

}  // namespace tessera::auth

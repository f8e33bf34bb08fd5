#include "auth/roles.h"

namespace tessera::auth {

std::string_view ToString(Role role) {
  switch (role) {
    case Role::kClusterAdmin: return "cluster-admin";
    case Role::kUser: return "user";
    case Role::kViewer: return "viewer";
    case Role::kNodeJoin: return "node-join";
    case Role::kNode: return "node";
  }
  return "?";
}

std::optional<Role> RoleFromString(std::string_view text) {
  for (Role r : {Role::kClusterAdmin, Role::kUser, Role::kViewer, Role::kNodeJoin, Role::kNode}) {
    if (ToString(r) == text) return r;
  }
  return std::nullopt;
}

std::string_view ToString(Access access) {
  switch (access) {
    case Access::kPublic: return "public";
    case Access::kRead: return "read";
    case Access::kWrite: return "write";
    case Access::kAdmin: return "admin";
    case Access::kNode: return "node";
    case Access::kJoin: return "join";
  }
  return "?";
}

bool Allows(Role role, Access access) {
  switch (access) {
    case Access::kPublic: return true;
    case Access::kRead: return role == Role::kClusterAdmin || role == Role::kUser || role == Role::kViewer;
    case Access::kWrite: return role == Role::kClusterAdmin || role == Role::kUser;
    case Access::kAdmin: return role == Role::kClusterAdmin;
    case Access::kNode: return role == Role::kNode;
    case Access::kJoin: return role == Role::kNode || role == Role::kNodeJoin;
  }
  return false;
}

}  // namespace tessera::auth

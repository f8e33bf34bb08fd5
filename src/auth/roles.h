// Who may do what. A caller has one role from its token:
//
//   cluster-admin  everything
//   user           submits to the queues it is a member of, sees and cancels
//                  its own jobs, sees the cluster in aggregate; a user named
//                  among a queue's admins is that subtree's queue-admin
//                  (its quotas and members, every job inside it)
//   viewer         reads everything except logs, tokens and the audit log
//   node-join      registers a new node once, to receive that node's credential
//   node           one node's agent: reports for it and receives its tasks
//
// Routes declare the least access they need (Access); what a route then
// does for a particular job or queue is checked where the object is known.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::auth {

enum class Role { kClusterAdmin, kUser, kViewer, kNodeJoin, kNode };

std::string_view ToString(Role role);
std::optional<Role> RoleFromString(std::string_view text);

// What a route needs before it looks at any object.
enum class Access {
  kPublic,   // anyone, even without a token (health, leader, the dashboard's files)
  kRead,     // any person's token: cluster-admin, user, viewer
  kWrite,    // cluster-admin or user (object checks follow in the handler)
  kAdmin,    // cluster-admin
  kNode,     // the node credential of the node the path names
  kJoin,     // a node-join token, or the credential of the node the path names
};

std::string_view ToString(Access access);

// Whether `role` passes `access` (for kNode and kJoin, the node's name is
// checked by the caller as well).
bool Allows(Role role, Access access);

}  // namespace tessera::auth

// The API's operations in one table (docs/api.md, "Operations"): each one's name, who may call
// it, whether it only reads, whether an anonymous page may read it ([web] public_read), and
// whether it is served over HTTP. rotad's request pipeline dispatches by it and enforces what it
// says of admins and HTTP; the HTTP front end takes its methods and scopes from it; "unknown
// operation" replies list it; a test checks that docs/api.md has a section for each. Tested by
// ops_test.cc.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace rota::api {

enum class OpAccess {
  kAnyone,  // any caller, for anything (reads of shared state, their own submissions)
  kOwner,   // any caller, on what is theirs; admins on anything (the handler checks the object)
  kAdmin,   // admins only (the pipeline refuses others: "only admins may <admin_action>")
};

struct OpInfo {
  std::string_view name;
  OpAccess access = OpAccess::kAnyone;
  std::string_view admin_action;  // kAdmin: what others are told they may not do
  bool read_only = false;         // changes nothing: HTTP GET, read-scoped tokens
  bool public_read = false;       // [web] public_read opens it to anonymous callers
  // Why it is not served over HTTP ("" when it is): it needs a live connection, or it mints a
  // credential, which must come from the operating system's identity on the socket.
  std::string_view socket_only;
};

// Every operation, in the order "unknown operation" replies list them.
std::span<const OpInfo> Ops();
// The operation named `name`; nullptr for none.
const OpInfo* FindOp(std::string_view name);
// "hello, submit, run, ...": the names, in table order.
std::string OpNames();

}  // namespace rota::api

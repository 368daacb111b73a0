#include "core/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rota {
namespace status_test {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = NotFound("no job 42");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no job 42");
  EXPECT_EQ(s.ToString(), "NotFound: no job 42");
}

TEST(StatusTest, HelpersMapToTheirCodes) {
  EXPECT_EQ(InvalidArgument("x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NotFound("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(PermissionDenied("x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(FailedPrecondition("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ResourceExhausted("x").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(Unavailable("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Internal("x").code(), StatusCode::kInternal);
  EXPECT_EQ(ResourceExhausted("quota used up").ToString(), "ResourceExhausted: quota used up");
}

TEST(StatusTest, CodeNamesAndHttpStatuses) {
  struct Row {
    StatusCode code;
    const char* name;
    int http;
  };
  const std::vector<Row> rows = {
      {StatusCode::kOk, "OK", 200},
      {StatusCode::kInvalidArgument, "InvalidArgument", 400},
      {StatusCode::kNotFound, "NotFound", 404},
      {StatusCode::kPermissionDenied, "PermissionDenied", 403},
      {StatusCode::kAlreadyExists, "AlreadyExists", 409},
      {StatusCode::kFailedPrecondition, "FailedPrecondition", 409},
      {StatusCode::kResourceExhausted, "ResourceExhausted", 429},
      {StatusCode::kUnavailable, "Unavailable", 503},
      {StatusCode::kInternal, "Internal", 500},
  };
  for (const Row& r : rows) {
    EXPECT_STREQ(StatusCodeName(r.code), r.name);
    EXPECT_EQ(HttpStatus(r.code), r.http) << r.name;
  }
  // Out-of-range values do not crash and map to a server error.
  EXPECT_STREQ(StatusCodeName(static_cast<StatusCode>(99)), "Unknown");
  EXPECT_EQ(HttpStatus(static_cast<StatusCode>(99)), 500);
}

TEST(StatusTest, AlreadyExistsHasNoHelperButWorksViaConstructor) {
  Status s(StatusCode::kAlreadyExists, "job 7 exists");
  EXPECT_EQ(s.ToString(), "AlreadyExists: job 7 exists");
  EXPECT_EQ(HttpStatus(s.code()), 409);
}

TEST(StatusOrTest, HoldsValue) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.value(), 42);
  EXPECT_EQ(*v, 42);
  EXPECT_TRUE(v.status().ok());
  *v = 7;
  EXPECT_EQ(v.value(), 7);
}

TEST(StatusOrTest, HoldsError) {
  StatusOr<std::string> v = InvalidArgument("bad size \"2X\"");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message(), "bad size \"2X\"");
}

TEST(StatusOrTest, ArrowAndMoveOut) {
  StatusOr<std::string> v = std::string("hello");
  EXPECT_EQ(v->size(), 5u);
  v->append("!");
  EXPECT_EQ(*v, "hello!");
  std::string moved = std::move(v).value();
  EXPECT_EQ(moved, "hello!");

  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(3);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> owned = std::move(p).value();
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(*owned, 3);
}

TEST(StatusOrTest, ReturnedFromFunction) {
  auto half = [](int x) -> StatusOr<int> {
    if (x % 2 != 0) return InvalidArgument("odd");
    return x / 2;
  };
  EXPECT_EQ(*half(10), 5);
  EXPECT_FALSE(half(3).ok());
  EXPECT_EQ(half(3).status().ToString(), "InvalidArgument: odd");
}

}  // namespace
}  // namespace status_test
}  // namespace rota

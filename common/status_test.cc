// Tests of Status / StatusOr and the early-return macros every library function relies on.
#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace irm {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, ErrorCarriesCodeLocationMessage) {
  Status s(StatusCode::kParseError, Location::Text("f.prototxt", 3, 7), "msg");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_EQ(s.message(), "msg");
  EXPECT_EQ(s.location().line, 3);
  EXPECT_EQ(s.location().column, 7);
  EXPECT_EQ(s.diagnostic().severity, Severity::kError);
  // ToString is the rendered diagnostic without the trailing newline.
  EXPECT_EQ(s.ToString(), "f.prototxt:3:7: error: msg");
}

TEST(StatusTest, ToStringKeepsNotesButDropsLastNewline) {
  Status s(StatusCode::kInvalid, Location::File("m.pdmodel"), "bad");
  s.AddNote("n1").AddNote("n2");
  EXPECT_EQ(s.diagnostic().notes.size(), 2u);
  EXPECT_EQ(s.ToString(), "m.pdmodel: error: bad\n  note: n1\n  note: n2");
}

TEST(StatusTest, InFileFillsOnlyAnEmptyFile) {
  Status s(StatusCode::kNotFound, Location{}, "gone");
  s.InFile("a.pdmodel");
  EXPECT_EQ(s.location().file, "a.pdmodel");
  s.InFile("b.pdmodel");  // already set: kept
  EXPECT_EQ(s.location().file, "a.pdmodel");
  EXPECT_EQ(s.ToString(), "a.pdmodel: error: gone");
}

// A failure's diagnostic is deep-copied; an OK status carries none, so notes and files given to
// it are dropped rather than making an OK status that renders something.
TEST(StatusTest, CopiesAreIndependentAndOkCarriesNothing) {
  const Status failed(StatusCode::kInvalid, Location::File("f.pdmodel"), "bad");
  Status copy = failed;
  copy.AddNote("only on the copy");
  EXPECT_TRUE(failed.diagnostic().notes.empty());
  EXPECT_EQ(copy.ToString(), "f.pdmodel: error: bad\n  note: only on the copy");
  Status assigned;
  assigned = copy;
  EXPECT_EQ(assigned.code(), StatusCode::kInvalid);
  EXPECT_EQ(assigned.ToString(), copy.ToString());
  assigned = Status::Ok();
  EXPECT_TRUE(assigned.ok());
  EXPECT_EQ(copy.message(), "bad");

  Status ok;
  ok.AddNote("dropped").InFile("g.pdmodel");
  EXPECT_TRUE(ok.ok());
  EXPECT_TRUE(ok.diagnostic().notes.empty());
  EXPECT_EQ(ok.location().file, "");
  EXPECT_EQ(ok.ToString(), "OK");
}

TEST(StatusTest, BuiltFromDiagnostic) {
  Diagnostic d = Warning(Location::File("w"), "careful");
  Status s(StatusCode::kInvalid, d);
  EXPECT_EQ(s.diagnostic().severity, Severity::kWarning);
  EXPECT_EQ(s.ToString(), "w: warning: careful");
}

TEST(StatusTest, CodeNames) {
  EXPECT_STREQ(StatusCodeName(StatusCode::kOk), "ok");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInvalidArgument), "invalid argument");
  EXPECT_STREQ(StatusCodeName(StatusCode::kNotFound), "not found");
  EXPECT_STREQ(StatusCodeName(StatusCode::kIoError), "i/o error");
  EXPECT_STREQ(StatusCodeName(StatusCode::kParseError), "parse error");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInvalid), "invalid");
  EXPECT_STREQ(StatusCodeName(StatusCode::kUnimplemented), "unimplemented");
  EXPECT_STREQ(StatusCodeName(StatusCode::kInternal), "internal error");
}

TEST(StatusOrTest, HoldsValue) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), 42);
  EXPECT_EQ(*v, 42);
  *v = 7;
  EXPECT_EQ(v.value(), 7);
}

TEST(StatusOrTest, HoldsError) {
  StatusOr<int> v = Status(StatusCode::kNotFound, Location::File("x"), "missing");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(v.status().ToString(), "x: error: missing");
}

TEST(StatusOrTest, BuiltFromOkStatusIsAnInternalError) {
  // An OK status carries no value: StatusOr refuses to pretend it holds one.
  StatusOr<int> v = Status::Ok();
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
  EXPECT_EQ(v.status().message(), "StatusOr built from OK");
}

TEST(StatusOrTest, MoveOnlyValueAndArrow) {
  StatusOr<std::unique_ptr<std::string>> v = std::make_unique<std::string>("abc");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(**v, "abc");
  std::unique_ptr<std::string> taken = std::move(v).value();
  EXPECT_EQ(*taken, "abc");

  StatusOr<std::string> s = std::string("hello");
  EXPECT_EQ(s->size(), 5u);
  const StatusOr<std::string>& cs = s;
  EXPECT_EQ(cs->front(), 'h');
  EXPECT_EQ(cs.value(), "hello");
}

// --- the macros -------------------------------------------------------------------------------

Status FailIf(bool fail, int* calls) {
  ++*calls;
  if (fail) return Status(StatusCode::kInvalid, Location::File("f"), "failed");
  return Status::Ok();
}

Status TwoSteps(bool fail_first, bool fail_second, int* calls, bool* reached_end) {
  IRM_RETURN_IF_ERROR(FailIf(fail_first, calls));
  IRM_RETURN_IF_ERROR(FailIf(fail_second, calls));
  *reached_end = true;
  return Status::Ok();
}

TEST(MacroTest, ReturnIfErrorStopsAtTheFirstFailure) {
  int calls = 0;
  bool end = false;
  EXPECT_TRUE(TwoSteps(false, false, &calls, &end).ok());
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(end);

  calls = 0;
  end = false;
  Status s = TwoSteps(true, false, &calls, &end);
  EXPECT_EQ(s.code(), StatusCode::kInvalid);
  EXPECT_EQ(s.ToString(), "f: error: failed");
  EXPECT_EQ(calls, 1);  // the second step never ran
  EXPECT_FALSE(end);

  calls = 0;
  s = TwoSteps(false, true, &calls, &end);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(end);
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) {
    return Status(StatusCode::kInvalidArgument, Location{}, std::to_string(x) + " is odd");
  }
  return x / 2;
}

Status ReturnIfErrorOnStatusOr(int x) {
  IRM_RETURN_IF_ERROR(Half(x).status());
  return Status::Ok();
}

TEST(MacroTest, ReturnIfErrorTakesAStatusOrsStatus) {
  EXPECT_TRUE(ReturnIfErrorOnStatusOr(4).ok());
  EXPECT_EQ(ReturnIfErrorOnStatusOr(3).message(), "3 is odd");
}

StatusOr<int> Quarter(int x) {
  IRM_ASSIGN_OR_RETURN(int half, Half(x));
  // Two uses in one function need distinct temporaries (the macro names them by line).
  IRM_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(MacroTest, AssignOrReturn) {
  StatusOr<int> q = Quarter(12);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, 3);

  StatusOr<int> odd = Quarter(7);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(odd.status().message(), "7 is odd");

  StatusOr<int> odd_half = Quarter(6);  // 6/2 = 3 is odd: the second step fails
  ASSERT_FALSE(odd_half.ok());
  EXPECT_EQ(odd_half.status().message(), "3 is odd");
}

StatusOr<std::vector<std::string>> Words(bool fail) {
  if (fail) return Status(StatusCode::kIoError, Location::File("w"), "no words");
  return std::vector<std::string>{"a", "b"};
}

Status AssignIntoExisting(bool fail, std::vector<std::string>* out) {
  // The left-hand side may be an existing lvalue, not only a declaration.
  IRM_ASSIGN_OR_RETURN(*out, Words(fail));
  return Status::Ok();
}

TEST(MacroTest, AssignOrReturnIntoAnExistingVariable) {
  std::vector<std::string> words = {"old"};
  EXPECT_EQ(AssignIntoExisting(true, &words).code(), StatusCode::kIoError);
  EXPECT_EQ(words, std::vector<std::string>{"old"});  // untouched on failure
  EXPECT_TRUE(AssignIntoExisting(false, &words).ok());
  EXPECT_EQ(words, (std::vector<std::string>{"a", "b"}));
}

StatusOr<std::unique_ptr<int>> MakeBox(int v) { return std::make_unique<int>(v); }

StatusOr<int> Unbox(int v) {
  // A move-only value goes through the macro (it moves out of the temporary).
  IRM_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(v));
  return *box;
}

TEST(MacroTest, AssignOrReturnMovesMoveOnlyValues) {
  StatusOr<int> v = Unbox(5);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 5);
}

}  // namespace
}  // namespace irm

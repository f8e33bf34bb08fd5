#include "api/session_protocol.h"

#include <gtest/gtest.h>

namespace tessera::api {
namespace {

TEST(SessionFrames, DecodeFramesSplitAtEveryByte) {
  const std::string stream = EncodeFrame(FrameType::kOutput, "hello") + EncodeFrame(FrameType::kInput, "") +
                             EncodeFrame(FrameType::kExit, "3");
  FrameDecoder decoder;
  std::vector<Frame> frames;
  for (char c : stream) {
    decoder.Feed(std::string_view(&c, 1));
    for (;;) {
      Result<std::optional<Frame>> next = decoder.Next();
      ASSERT_TRUE(next.ok()) << next.status().message();
      if (!*next) break;
      frames.push_back(std::move(**next));
    }
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].type, FrameType::kOutput);
  EXPECT_EQ(frames[0].payload, "hello");
  EXPECT_EQ(frames[1].type, FrameType::kInput);
  EXPECT_EQ(frames[1].payload, "");
  EXPECT_EQ(frames[2].type, FrameType::kExit);
  EXPECT_EQ(frames[2].payload, "3");
}

TEST(SessionFrames, RefusesWhatIsNotAFrame) {
  FrameDecoder http;
  http.Feed("HTTP/1.1 200 OK\r\n");
  EXPECT_FALSE(http.Next().ok());
  FrameDecoder huge;
  huge.Feed(std::string("o\x7f\xff\xff\xff", 5));
  EXPECT_FALSE(huge.Next().ok());
}

TEST(SessionRequests, RoundTripAndErrorsNameTheField) {
  SessionRequest r;
  r.kind = SessionKind::kExec;
  r.command = {"bash", "-l"};
  r.tty = true;
  r.rows = 40;
  r.cols = 120;
  r.id = "s-7";
  r.key = {12, 2, 1};
  Result<SessionRequest> back = SessionRequestFromJson(ToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->command, r.command);
  EXPECT_TRUE(back->tty);
  EXPECT_EQ(back->rows, 40);
  EXPECT_EQ(back->id, "s-7");
  EXPECT_EQ(back->key, r.key);

  EXPECT_EQ(SessionRequestFromJson({{"kind", "exec"}}).status().message(), "command: an exec needs a command");
  EXPECT_EQ(SessionRequestFromJson({{"kind", "port-forward"}}).status().message(), "port: a port-forward needs the port to reach (1-65535)");
  EXPECT_NE(SessionRequestFromJson({{"kind", "shell"}}).status().message().find("'shell' is not one of"), std::string::npos);
  EXPECT_FALSE(SessionRequestFromJson({{"kind", "attach"}, {"colour", 1}}).ok());
}

}  // namespace
}  // namespace tessera::api

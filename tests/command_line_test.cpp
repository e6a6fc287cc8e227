// The command-line front end's parts (common/command_line.h, common/progress_bar.h) on a toy command: exit codes,
// the closest-flag suggestion, --help, and the progress line's text.
#include <gtest/gtest.h>

#include "common/command_line.h"
#include "common/error.h"
#include "common/progress_bar.h"

namespace ogx::cli {
namespace {

int g_count = 0;

Runner define_toy(Flags& flags) {
  auto n = std::make_shared<int>(1);
  auto mode = std::make_shared<std::string>("run");
  flags.option("--count", *n, "how many");
  flags.choice("--mode", *mode, "what to do", {"run", "fail", "misuse"});
  return [n, mode] {
    if (*mode == "fail") throw_error("the toy failed");
    if (*mode == "misuse") throw UsageError("--mode misuse needs --count 0");
    g_count = *n;
    return 0;
  };
}

const Command kToy = {"toy", "a toy command", define_toy};

TEST(CommandLine, ExitCodes) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_command(kToy, {"--count", "3"}), 0);
  EXPECT_EQ(g_count, 3);
  EXPECT_EQ(run_command(kToy, {"--count=4"}), 0);
  EXPECT_EQ(g_count, 4);
  EXPECT_EQ(run_command(kToy, {"--mode", "fail"}), 1);
  EXPECT_EQ(run_command(kToy, {"--mode", "misuse"}), 2);
  EXPECT_EQ(run_command(kToy, {"--mode", "walk"}), 2);
  EXPECT_EQ(run_command(kToy, {"--count", "x"}), 2);
  EXPECT_EQ(run_command(kToy, {"--count"}), 2);
  EXPECT_EQ(run_command(kToy, {"--cuont", "2"}), 2);
  EXPECT_EQ(run_command(kToy, {"stray"}), 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ogx toy: error: the toy failed\n"), std::string::npos) << err;
  EXPECT_NE(err.find("ogx toy: unknown flag --cuont (did you mean --count?)"), std::string::npos) << err;
  EXPECT_NE(err.find("ogx toy: unexpected argument 'stray'"), std::string::npos) << err;
  EXPECT_NE(err.find("--mode misuse needs --count 0"), std::string::npos) << err;
}

TEST(CommandLine, HelpListsTheFlags) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_command(kToy, {"--help"}), 0);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("ogx toy"), std::string::npos) << out;
  EXPECT_NE(out.find("--count"), std::string::npos) << out;
}

TEST(CommandLine, Closest) {
  const std::vector<std::string> flags = {"--max-new-tokens", "--min-new-tokens", "--prompt", "-p"};
  EXPECT_EQ(closest("--max-new-token", flags), "--max-new-tokens");
  EXPECT_EQ(closest("--promtp", flags), "--prompt");
  EXPECT_EQ(closest("--temperature", flags), "");  // nothing close: no suggestion
}

TEST(ProgressBar, Line) {
  progress::Event e{"uploading weights", 500'000'000, 2'000'000'000, progress::Unit::bytes};
  std::string line = ProgressBar::format(e, 2.0, 100);
  EXPECT_EQ(line.rfind("uploading weights [", 0), 0u) << line;
  EXPECT_NE(line.find("500.0 MB / 2.00 GB, 250.0 MB/s, ETA 6s"), std::string::npos) << line;
  e.done = e.total;
  EXPECT_NE(ProgressBar::format(e, 8.0, 100).find("2.00 GB / 2.00 GB, 250.0 MB/s, 8s"), std::string::npos);
  progress::Event r{"bench repeats", 1, 3, progress::Unit::items};
  EXPECT_NE(ProgressBar::format(r, 10.0).find("1 / 3, ETA 20s"), std::string::npos) << ProgressBar::format(r, 10.0);
}

}  // namespace
}  // namespace ogx::cli

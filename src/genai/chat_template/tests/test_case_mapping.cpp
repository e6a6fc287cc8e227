// Unicode case changes (case_mapping.cpp). Expected strings are what Python 3.11 with jinja2 3.1 renders for the
// same template and input (str.upper / lower / title / capitalize; Jinja's own `title` filter).
#include <gtest/gtest.h>

#include "genai/chat_template/chat_template.h"

using nlohmann::ordered_json;
using ogx::jinja::Template;

namespace {
std::string R(const std::string& src, const std::string& s) {
  return Template::parse(src).render(ordered_json{{"s", s}}, ogx::jinja::RenderOptions{});
}
}  // namespace

TEST(ChatTemplateCaseMapping, UpperUsesFullMappings) {
  EXPECT_EQ(R("{{ s | upper }}", "straße ﬁx ǆ"), "STRASSE FIX Ǆ");  // ß -> SS, ligature ﬁ -> FI, digraph
  EXPECT_EQ(R("{{ s | upper }}", "istanbul ı i"), "ISTANBUL I I");  // no Turkish rules: i -> I, dotless ı -> I
  EXPECT_EQ(R("{{ s.upper() }}{{ s.lower() }}", "Ǆǅǆ"), "ǄǄǄǆǆǆ");
}

TEST(ChatTemplateCaseMapping, LowerFinalSigmaAndDottedI) {
  EXPECT_EQ(R("{{ s | lower }}", "ΟΔΟΣ ΣΑΣ Σ ΑΣ."), "οδος σας σ ας.");  // ς only at a word's end
  EXPECT_EQ(R("{{ s | lower }}", "İSTANBUL I"), "i̇stanbul i");           // İ -> i + U+0307, as Python
}

TEST(ChatTemplateCaseMapping, TitleFilterIsJinjasNotStrTitle) {
  const std::string s = "ǆungla they're (ßtraße) ΟΔΟΣ-σας";
  EXPECT_EQ(R("{{ s | title }}", s), "Ǆungla They're (SStraße) Οδος-Σας");  // words split at space and -({[<
  EXPECT_EQ(R("{{ s.title() }}", s), "ǅungla They'Re (Sstraße) Οδος-Σας");    // titlecase digraph ǅ, Ss
  EXPECT_EQ(R("{{ s | title }}", "hello\u00a0wörld x"), "Hello\u00a0Wörld X");
}

TEST(ChatTemplateCaseMapping, CapitalizeTitlecasesTheFirstCharacter) {
  EXPECT_EQ(R("{{ s | capitalize }}", "ǆUNGLA ΟΔΟΣ"), "ǅungla οδος");
  EXPECT_EQ(R("{{ s | capitalize }}", "ßAS"), "Ssas");
  EXPECT_EQ(R("{{ s.capitalize() }}", "ﬁNAL ΣΑΣ"), "Final σας");
}

TEST(ChatTemplateCaseMapping, AsciiAndIllFormedInput) {
  EXPECT_EQ(R("{{ s | upper }}|{{ s | lower }}|{{ s.title() }}", "hELLO wORLD 42x"), "HELLO WORLD 42X|hello world 42x|Hello World 42X");
  EXPECT_EQ(R("{{ s | upper }}", std::string("a\xff" "b")), std::string("A\xff" "B"));  // passes through
  EXPECT_EQ(R("{{ s | capitalize }}|{{ s | title }}", ""), "|");
}

TEST(ChatTemplateCaseMapping, IsUpperIsLower) {
  const char* t = "{{ s.isupper() }}/{{ s.islower() }}";
  EXPECT_EQ(R(t, "ΣΑΣ 12"), "True/False");
  EXPECT_EQ(R(t, "straße"), "False/True");
  EXPECT_EQ(R(t, "ǅungla"), "False/False");  // a titlecase letter is neither
  EXPECT_EQ(R(t, "ǄUNGLA"), "True/False");
  EXPECT_EQ(R(t, "12"), "False/False");      // no cased character
  EXPECT_EQ(R(t, "ʰ"), "False/True");        // Other_Lowercase
  EXPECT_EQ(R(t, "Ⅷ"), "True/False");       // Other_Uppercase
}

// The regex lexer against a reference matcher on random regexes, number ranges against arithmetic, and the Earley parser against a brute-force
// enumeration of small random grammars' languages.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "common/error.h"
#include "genai/guidance/grammar.h"
#include "genai/guidance/number_range.h"

using namespace ogx::genai::guidance;

namespace {

// Whole-string match of one regex through the lexer's DFA.
struct OneRegex {
  Lexer lx;
  int32_t id;
  explicit OneRegex(const std::string& rx, RegexOptions o = {}) {
    id = lx.add(rx, o);
    lx.finish();
  }
  bool match(const std::string& s) {
    int32_t st = lx.start({id});
    for (unsigned char c : s) {
      st = lx.next(st, c);
      if (st == Lexer::kDead) return false;
    }
    return !lx.accepts(st).empty();
  }
};

// A random regex as text and as a tree, with a reference matcher over the tree (sets of end positions: no
// backtracking, so nested repetitions stay cheap).
struct Rx {
  enum Kind { kChar, kClass, kNotA, kCat, kAlt, kRep } kind;
  char c = 0;
  std::vector<Rx> kids;
  int min = 0, max = -1;
  std::string text;

  std::set<size_t> ends(const std::string& s, size_t i) const {
    std::set<size_t> out;
    switch (kind) {
      case kChar: if (i < s.size() && s[i] == c) out.insert(i + 1); break;
      case kClass: if (i < s.size() && (s[i] == 'a' || s[i] == 'b')) out.insert(i + 1); break;
      case kNotA: if (i < s.size() && s[i] != 'a') out.insert(i + 1); break;
      case kCat:
        for (size_t m : kids[0].ends(s, i))
          for (size_t e : kids[1].ends(s, m)) out.insert(e);
        break;
      case kAlt:
        out = kids[0].ends(s, i);
        for (size_t e : kids[1].ends(s, i)) out.insert(e);
        break;
      case kRep: {
        std::set<size_t> cur = {i};
        if (min == 0) out.insert(i);
        for (int n = 1; max < 0 || n <= max; n++) {
          std::set<size_t> next;
          for (size_t m : cur)
            for (size_t e : kids[0].ends(s, m)) next.insert(e);
          if (n >= min) out.insert(next.begin(), next.end());
          if (next.empty() || (next == cur && n >= min) || n > (int)s.size() + min + 1) break;
          cur = next;
        }
        break;
      }
    }
    return out;
  }
  bool match(const std::string& s) const { return ends(s, 0).count(s.size()) > 0; }
};

Rx random_regex(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return (int)(rng() % n); };
  Rx r;
  int k = depth > 3 ? 0 : pick(9);
  if (k == 0 || k == 8) {
    r.kind = Rx::kChar;
    r.c = "abc"[pick(3)];
    r.text = std::string(1, r.c);
    if (k == 8) r.text = "(" + r.text + ")";
  } else if (k == 1) {
    r.kind = pick(2) ? Rx::kClass : Rx::kNotA;
    r.text = r.kind == Rx::kClass ? "[ab]" : "[^a]";
  } else if (k == 2 || k == 3) {
    r.kind = k == 2 ? Rx::kCat : Rx::kAlt;
    r.kids = {random_regex(rng, depth + 1), random_regex(rng, depth + 1)};
    r.text = k == 2 ? "(?:" + r.kids[0].text + ")(?:" + r.kids[1].text + ")"
                    : "(?:" + r.kids[0].text + "|" + r.kids[1].text + ")";
  } else {
    r.kind = Rx::kRep;
    r.kids = {random_regex(rng, depth + 1)};
    const char* op = "";
    if (k == 4) r.min = 0, r.max = -1, op = "*";
    if (k == 5) r.min = 1, r.max = -1, op = "+";
    if (k == 6) r.min = 0, r.max = 1, op = "?";
    std::string q = op;
    if (k == 7) {
      r.min = pick(3);
      r.max = r.min + pick(3);
      q = "{" + std::to_string(r.min) + "," + std::to_string(r.max) + "}";
    }
    r.text = "(?:" + r.kids[0].text + ")" + q;
  }
  return r;
}

void all_strings(const std::string& alphabet, size_t max_len, std::vector<std::string>& out) {
  out.assign(1, "");
  for (size_t i = 0; i < out.size(); i++)
    if (out[i].size() < max_len)
      for (char c : alphabet) out.push_back(out[i] + c);
}

}  // namespace

TEST(GuidanceLexer, RandomRegexesMatchReference) {
  std::mt19937 rng(7);
  std::vector<std::string> strings;
  all_strings("abc", 5, strings);
  for (int t = 0; t < 300; t++) {
    Rx rx = random_regex(rng, 0);
    OneRegex mine(rx.text);
    for (auto& s : strings) ASSERT_EQ(mine.match(s), rx.match(s)) << "regex " << rx.text << " string '" << s << "'";
  }
}

TEST(GuidanceLexer, Utf8ClassesAndEscapes) {
  OneRegex greek("[α-ω]+");
  EXPECT_TRUE(greek.match("βγ"));
  EXPECT_FALSE(greek.match("a"));
  EXPECT_FALSE(greek.match("\xCE"));  // a lead byte alone is not a code point
  OneRegex dot("a.c");
  EXPECT_TRUE(dot.match("aéc"));
  EXPECT_TRUE(dot.match("a😀c"));
  EXPECT_FALSE(dot.match("a\nc"));
  EXPECT_FALSE(dot.match("a\xFF" "c"));  // not UTF-8
  OneRegex neg("[^a]");
  EXPECT_TRUE(neg.match("é"));
  EXPECT_FALSE(neg.match("a"));
  OneRegex esc("\\d{2}\\.\\w\\s\\x41\\u{1F600}");
  EXPECT_TRUE(esc.match("12.z A😀"));
  OneRegex icase("(?i)abc");
  EXPECT_TRUE(icase.match("AbC"));
  RegexOptions js;
  js.json_string = true;
  OneRegex quoted("a\"b\\\\c\\n", js);  // decoded a"b\c<newline> as JSON text
  EXPECT_TRUE(quoted.match("\"a\\\"b\\\\c\\n\""));
  EXPECT_FALSE(quoted.match("\"a\"b\\c\n\""));
}

TEST(GuidanceLexer, InvalidRegexesFailCleanly) {
  for (const char* bad : {"(", "a)", "[a", "a{3,1}", "*a", "(?=a)", "\\p{L}", "a{1000001}", "\\", "(?<=a)b", "\\q"}) {
    Lexer lx;
    EXPECT_THROW(lx.add(bad), ogx::Error) << bad;
  }
  Lexer big;
  EXPECT_THROW(big.add("(?:[a-z]{3000}){1000}"), ogx::Error);  // the automaton budget
  Lexer empties;  // empty bodies add no states: the compile-step budget stops these
  EXPECT_THROW(empties.add("((((((((((){0,9}){0,9}){0,9}){0,9}){0,9}){0,9}){0,9}){0,9}){0,9}){0,9}"), ogx::Error);
  // Repeated '+' was compiled as x x*, doubling per level (a fuzzer input ran out of memory); now linear.
  OneRegex plus("a" + std::string(200, '+') + "b");
  EXPECT_TRUE(plus.match("ab"));
  EXPECT_TRUE(plus.match("aaab"));
  EXPECT_FALSE(plus.match("b"));
  // A DFA that grows exponentially is stopped by the state and work budgets, with an error, mid-lexing.
  for (int budget = 0; budget < 2; budget++) {
    Lexer lx;
    if (budget == 0) lx.max_states = 500;
    else lx.max_work = 20000;
    int32_t id = lx.add("[ab]*a[ab]{24}");
    lx.finish();
    std::mt19937 rng(9);
    int32_t st = lx.start({id});
    EXPECT_THROW(
        for (int i = 0; i < 100000; i++) st = lx.next(st, "ab"[rng() % 2]), ogx::Error);
  }
}

TEST(GuidanceNumberRange, IntegersMatchArithmetic) {
  std::mt19937 rng(3);
  for (int t = 0; t < 200; t++) {
    int a = (int)(rng() % 301) - 150, b = a + (int)(rng() % 200);
    bool has_lo = rng() % 5 != 0, has_hi = rng() % 5 != 0, ex_lo = rng() % 2, ex_hi = rng() % 2;
    std::optional<Bound> lo, hi;
    if (has_lo) lo = Bound{(double)a, ex_lo};
    if (has_hi) hi = Bound{(double)b, ex_hi};
    if (has_lo && has_hi && (b - (ex_hi ? 1 : 0)) < (a + (ex_lo ? 1 : 0))) {  // an empty range is an error
      EXPECT_THROW(integer_range_regex(lo, hi), ogx::Error);
      continue;
    }
    OneRegex rx(integer_range_regex(lo, hi));
    for (int v = -400; v <= 400; v++) {
      bool in = (!has_lo || (ex_lo ? v > a : v >= a)) && (!has_hi || (ex_hi ? v < b : v <= b));
      ASSERT_EQ(rx.match(std::to_string(v)), in) << "range " << a << ".." << b << " value " << v;
    }
    EXPECT_FALSE(rx.match("01"));
    EXPECT_FALSE(rx.match("-0"));
  }
  EXPECT_THROW(integer_range_regex(Bound{5, false}, Bound{4, false}), ogx::Error);
}

TEST(GuidanceNumberRange, DecimalsMatchArithmetic) {
  std::mt19937 rng(5);
  const double vals[] = {-12.5, -3, -1.25, -0.5, -0.05, 0, 0.1, 0.25, 0.5, 1, 1.5, 2.75, 10, 99.9};
  std::vector<std::string> samples;
  for (int ip = -15; ip <= 15; ip++)
    for (const char* f : {"", ".0", ".05", ".1", ".25", ".249", ".251", ".5", ".75", ".9", ".99", ".001"}) {
      if (ip == 0 && f[0] == 0) samples.push_back("0");
      samples.push_back((ip < 0 ? "-" : "") + std::to_string(std::abs(ip)) + f);
    }
  samples.push_back("-0.5");
  samples.push_back("-0.05");
  for (int t = 0; t < 300; t++) {
    double a = vals[rng() % 14], b = vals[rng() % 14];
    if (a > b) std::swap(a, b);
    bool has_lo = rng() % 6 != 0, has_hi = rng() % 6 != 0, ex_lo = rng() % 2, ex_hi = rng() % 2;
    if (has_lo && has_hi && a == b && (ex_lo || ex_hi)) continue;
    std::optional<Bound> lo, hi;
    if (has_lo) lo = Bound{a, ex_lo};
    if (has_hi) hi = Bound{b, ex_hi};
    std::string r = number_range_regex(lo, hi);
    OneRegex rx(r);
    for (auto& s : samples) {
      double v = std::stod(s);
      if (s == "-0" || (s.rfind("-0.0", 0) == 0 && v == 0)) continue;
      bool in = (!has_lo || (ex_lo ? v > a : v >= a)) && (!has_hi || (ex_hi ? v < b : v <= b));
      ASSERT_EQ(rx.match(s), in) << "range " << (has_lo ? a : -1e300) << (ex_lo ? " (excl) " : " ") << ".. "
                                 << (has_hi ? b : 1e300) << (ex_hi ? " (excl)" : "") << " value " << s << "\n" << r;
    }
  }
}

namespace {

// A random grammar over lexemes "a" and "b" with nonterminals S, X, Y.
struct SmallGrammar {
  std::vector<std::pair<int, std::vector<int>>> rules;  // lhs 0..2 (S X Y), rhs symbols: -1 'a', -2 'b', 0..2
};

SmallGrammar random_grammar(std::mt19937& rng) {
  SmallGrammar g;
  int n = 3 + (int)(rng() % 5);
  for (int i = 0; i < n; i++) {
    int lhs = i < 3 ? i : (int)(rng() % 3);
    std::vector<int> rhs;
    int len = (int)(rng() % 4);
    for (int k = 0; k < len; k++) {
      int r = (int)(rng() % 5);
      rhs.push_back(r < 2 ? -1 - r : r - 2);
    }
    g.rules.push_back({lhs, rhs});
  }
  return g;
}

// The strings up to max_len each nonterminal derives (fixpoint).
std::vector<std::set<std::string>> languages(const SmallGrammar& g, size_t max_len) {
  std::vector<std::set<std::string>> lang(3);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [lhs, rhs] : g.rules) {
      std::set<std::string> cur = {""};
      for (int s : rhs) {
        std::set<std::string> next;
        for (auto& p : cur) {
          if (s < 0) {
            if (p.size() < max_len) next.insert(p + (s == -1 ? "a" : "b"));
          } else {
            for (auto& q : lang[s])
              if (p.size() + q.size() <= max_len) next.insert(p + q);
          }
        }
        cur = std::move(next);
      }
      for (auto& x : cur) changed = lang[lhs].insert(x).second || changed;
    }
  }
  return lang;
}

}  // namespace

TEST(GuidanceEarley, RandomGrammarsMatchBruteForce) {
  std::mt19937 rng(11);
  std::vector<std::string> strings;
  all_strings("ab", 6, strings);
  int checked = 0;
  for (int t = 0; t < 400; t++) {
    SmallGrammar sg = random_grammar(rng);
    auto lang = languages(sg, 8);
    GrammarBuilder b;
    int32_t la = b.lexeme("a"), lb = b.lexeme("b");
    int32_t nts[3] = {b.nonterminal("S"), b.nonterminal("X"), b.nonterminal("Y")};
    for (auto& [lhs, rhs] : sg.rules) {
      std::vector<int32_t> r;
      for (int s : rhs) r.push_back(s == -1 ? la : s == -2 ? lb : nts[s]);
      b.rule(nts[lhs], r);
    }
    std::unique_ptr<Grammar> g;
    try {
      g = b.build(nts[0]);
    } catch (const ogx::Error&) {
      EXPECT_TRUE(lang[0].empty()) << "grammar " << t << " rejected but derives strings";
      continue;
    }
    checked++;
    for (auto& s : strings) {
      Rows rows = {earley_initial(*g)};
      bool alive = true;
      for (size_t i = 0; i < s.size() && alive; i++) {
        int32_t lex = s[i] == 'a' ? la : lb;
        // Expected lexemes: every one that can extend to a string of the language (within the enumeration bound,
        // Earley may only add more).
        bool some = false;
        for (auto& w : lang[0]) some = some || (w.size() > i && w.compare(0, i + 1, s.substr(0, i) + s[i]) == 0);
        bool expected = std::binary_search(rows.back()->expected.begin(), rows.back()->expected.end(), lex);
        if (some) {
          ASSERT_TRUE(expected) << "grammar " << t << " prefix " << s.substr(0, i + 1);
        }
        auto row = earley_scan(*g, rows, {lex});
        ASSERT_EQ(row != nullptr, expected);
        if (!row) alive = false;
        else rows.push_back(row);
      }
      bool in = lang[0].count(s) > 0;
      ASSERT_EQ(alive && rows.back()->accepting, in) << "grammar " << t << " string '" << s << "'";
    }
  }
  EXPECT_GT(checked, 100);
}

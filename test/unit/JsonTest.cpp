// The runtime's small strict JSON reader (tc/Support/Json.h): RFC 8259's
// grammar, UTF-8 and escapes, integers, and quoting.
#include "tc/Support/Json.h"
#include "ErrorOf.h"
#include <gtest/gtest.h>

using namespace tc;

TEST(Json, ParsesEveryKindOfValue) {
  JsonValue v = parseJson(
      " {\"a\": [1, -2.5e+3, 0, true, false, null, \"s\"], \"o\": {}, \"e\": [], \"a\": 3}\r\n");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.members.size(), 4u); // duplicate keys kept, in order
  EXPECT_EQ(v.members[3].key, "a");
  const JsonValue *a = v.find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->items.size(), 7u);
  EXPECT_EQ(a->items[0].text, "1");
  EXPECT_EQ(a->items[1].text, "-2.5e+3");
  EXPECT_EQ(a->items[2].text, "0");
  EXPECT_TRUE(a->items[3].kind == JsonValue::Kind::Bool && a->items[3].boolean);
  EXPECT_TRUE(a->items[4].kind == JsonValue::Kind::Bool && !a->items[4].boolean);
  EXPECT_EQ(a->items[5].kind, JsonValue::Kind::Null);
  EXPECT_EQ(a->items[6].text, "s");
  EXPECT_TRUE(v.find("o")->isObject() && v.find("o")->members.empty());
  EXPECT_TRUE(v.find("e")->isArray() && v.find("e")->items.empty());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(parseJson("7").text, "7");
}

TEST(Json, StringsDecodeEscapesAndKeepUtf8) {
  EXPECT_EQ(parseJson(R"("\"\\\/\b\f\n\r\t")").text, "\"\\/\b\f\n\r\t");
  EXPECT_EQ(parseJson(R"("\u0041\u00e9\u20AC\ud83d\ude00\u0000")").text,
            std::string("A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0", 11));
  EXPECT_EQ(parseJson("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"").text,
            "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(Json, RejectsWhatRfc8259Does) {
  struct Case {
    const char *text, *error;
  };
  const Case cases[] = {
      {"", "unexpected end of input at offset 0"},
      {"  ", "unexpected end of input at offset 2"},
      {"01", "unexpected '1' after the value at offset 1"},
      {"1.", "expected a digit, found end of input at offset 2"},
      {".5", "unexpected '.' at offset 0"},
      {"+1", "unexpected '+' at offset 0"},
      {"-", "expected a digit, found end of input at offset 1"},
      {"1e", "expected a digit, found end of input at offset 2"},
      {"NaN", "unexpected 'N' at offset 0"},
      {"tru", "unexpected 't' at offset 0"},
      {"[1,]", "unexpected ']' at offset 3"},
      {"[1 2]", "expected ',', found '2' at offset 3"},
      {"{\"a\" 1}", "expected ':', found '1' at offset 5"},
      {"{'a': 1}", "expected a string key, found ''' at offset 1"},
      {"{\"a\": 1", "unterminated object at offset 7"},
      {"[1", "unterminated array at offset 2"},
      {"\"abc", "unterminated string at offset 4"},
      {"\"a\nb\"", "unescaped control character byte 0x0a in a string at offset 2"},
      {"\"\\x\"", "bad escape \\'x' in a string at offset 3"},
      {"\"\\u12g4\"", "bad hex digit 'g' in a \\u escape at offset 5"},
      {"\"\\ud83d\"", "unpaired high surrogate in a \\u escape at offset 7"},
      {"\"\\ud83d\\u0041\"", "unpaired high surrogate in a \\u escape at offset 13"},
      {"\"\\ude00\"", "unpaired low surrogate in a \\u escape at offset 7"},
      {"\"\xc0\x80\"", "invalid UTF-8 in a string at offset 1"},         // overlong NUL
      {"\"\xe0\x80\xaf\"", "invalid UTF-8 in a string at offset 1"},     // overlong '/'
      {"\"\xed\xa0\x80\"", "invalid UTF-8 in a string at offset 1"},     // encoded surrogate
      {"\"\xf4\x90\x80\x80\"", "invalid UTF-8 in a string at offset 1"}, // past U+10FFFF
      {"\"\xe2\x82\"", "invalid UTF-8 in a string at offset 1"},         // cut short
      {"\xef\xbb\xbf{}", "unexpected byte 0xef at offset 0"},            // a BOM
  };
  for (const Case &c : cases)
    EXPECT_EQ(errorOf([&] { parseJson(c.text); }), c.error) << c.text;
}

TEST(Json, NestingIsLimited) {
  auto nested = [](int n) { return std::string(size_t(n), '[') + std::string(size_t(n), ']'); };
  EXPECT_EQ(errorOf([&] { parseJson(nested(kMaxJsonDepth)); }), "");
  EXPECT_EQ(errorOf([&] { parseJson(nested(kMaxJsonDepth + 1)); }),
            "nesting deeper than 64 levels at offset 64");
  EXPECT_NE(errorOf([&] { parseJson(std::string(1'000'000, '[')); }), "");
}

TEST(Json, Int64) {
  auto num = [](const char *s) { return jsonInt64(parseJson(s)); };
  EXPECT_EQ(num("0"), 0);
  EXPECT_EQ(num("-0"), 0);
  EXPECT_EQ(num("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(num("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(num("9223372036854775808"), std::nullopt);
  EXPECT_EQ(num("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(num("184467440737095516160"), std::nullopt);
  EXPECT_EQ(num("1.0"), std::nullopt);
  EXPECT_EQ(num("1e3"), std::nullopt);
  EXPECT_EQ(num("\"1\""), std::nullopt);
}

TEST(Json, QuoteRoundTrips) {
  std::string all;
  for (int c = 1; c < 0x80; ++c)
    all += char(c);
  all += "\xc3\xa9\xf0\x9f\x98\x80";
  all += '\0';
  std::string q = quoteJson(all);
  EXPECT_EQ(parseJson(q).text, all);
  EXPECT_EQ(quoteJson("a\"b\\c\n\x1f/"), "\"a\\\"b\\\\c\\n\\u001f/\"");
  EXPECT_TRUE(isValidUtf8(all));
  EXPECT_FALSE(isValidUtf8("\xff"));
  EXPECT_FALSE(isValidUtf8("a\xc3"));
}

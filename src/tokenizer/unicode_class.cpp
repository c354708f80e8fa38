#include "tokenizer/unicode_class.h"

#include <algorithm>
#include <array>

#include "tokenizer/unicode_tables.h"

namespace gpt2 {
namespace {

// Most text is ASCII: a direct table keeps the binary search off the hot path.
std::array<CharClass, 128> buildAsciiClasses() {
    std::array<CharClass, 128> classes{};
    for (char32_t c = 0; c < 128; ++c) {
        const auto* end = unicode_tables::kRanges + unicode_tables::kRangeCount;
        const auto* range =
            std::find_if(unicode_tables::kRanges, end, [c](const unicode_tables::Range& r) { return c <= r.last; });
        classes[c] = (range != end && range->first <= c) ? range->cls : CharClass::Other;
    }
    return classes;
}

}  // namespace

CharClass charClass(char32_t codePoint) {
    static const std::array<CharClass, 128> ascii = buildAsciiClasses();
    if (codePoint < 128) return ascii[codePoint];
    const auto* end = unicode_tables::kRanges + unicode_tables::kRangeCount;
    const auto* range = std::lower_bound(unicode_tables::kRanges, end, codePoint,
                                         [](const unicode_tables::Range& r, char32_t c) { return r.last < c; });
    return (range != end && range->first <= codePoint) ? range->cls : CharClass::Other;
}

}  // namespace gpt2

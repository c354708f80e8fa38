#include "tokenizer/vocabulary.h"

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "util/error.h"

namespace gpt2 {
namespace {

std::string bytesOf(const std::string& tokenText, const std::string& sourceName, const std::string& where) {
    auto bytes = byteLevelToBytes(tokenText);
    if (!bytes)
        fail(sourceName, ": ", where, " \"", tokenText,
             "\" has a character outside GPT-2's 256 byte characters; use a byte-level BPE tokenizer's files");
    return std::move(*bytes);
}

}  // namespace

Vocabulary parseVocabJson(const std::string& json, const std::string& sourceName) {
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(json);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
        fail(sourceName, ": not valid JSON (", e.what(), "); pass GPT-2's vocab.json (encoder.json)");
    }
    if (!root.is_object() || root.empty())
        fail(sourceName, ": expected a non-empty JSON object mapping token strings to ids; pass GPT-2's vocab.json");

    std::vector<std::string> texts(root.size());
    std::vector<bool> seen(root.size(), false);
    for (const auto& [text, value] : root.items()) {
        if (!value.is_number_integer())
            fail(sourceName, ": token \"", text, "\" maps to ", value.dump(), ", expected an integer id");
        const auto id = value.get<long long>();
        if (id < 0 || id >= static_cast<long long>(root.size()))
            fail(sourceName, ": token \"", text, "\" has id ", id, ", outside 0..", root.size() - 1,
                 "; the ids of a vocab.json must be 0..size-1");
        if (seen[id]) fail(sourceName, ": id ", id, " is given to two tokens, the second \"", text, "\"");
        seen[id] = true;
        texts[id] = text;
    }
    return vocabularyFromTokens(texts, sourceName);
}

Vocabulary vocabularyFromTokens(const std::vector<std::string>& texts, const std::string& sourceName) {
    if (texts.empty()) fail(sourceName, ": the tokenizer has no tokens");
    Vocabulary vocab;
    vocab.tokens.resize(texts.size());
    for (std::size_t id = 0; id < texts.size(); ++id) {
        std::string bytes = bytesOf(texts[id], sourceName, "token");
        if (!vocab.ids.emplace(bytes, static_cast<int>(id)).second)
            fail(sourceName, ": token \"", texts[id], "\" (id ", id, ") has the same bytes as token id ",
                 vocab.ids[bytes]);
        vocab.tokens[id] = std::move(bytes);
    }

    for (int b = 0; b < 256; ++b) {
        const auto found = vocab.ids.find(std::string(1, static_cast<char>(b)));
        if (found == vocab.ids.end())
            fail(sourceName, ": no token for byte ", b,
                 ", which a byte-level vocab must have; pass GPT-2's vocab.json");
        vocab.byteIds[b] = found->second;
    }
    return vocab;
}

std::vector<BpeMerge> parseMerges(const std::string& text, const Vocabulary& vocab, const std::string& sourceName) {
    std::vector<BpeMerge> merges;
    std::size_t lineNumber = 0;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || (lineNumber == 1 && line.rfind("#version", 0) == 0)) continue;

        const std::size_t space = line.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string::npos)
            fail(sourceName, " line ", lineNumber, ": \"", line,
                 "\" is not two tokens separated by one space; pass GPT-2's merges.txt (vocab.bpe)");

        const std::string where = "line " + std::to_string(lineNumber) + ": token";
        const std::string left = bytesOf(line.substr(0, space), sourceName, where);
        const std::string right = bytesOf(line.substr(space + 1), sourceName, where);
        const auto idOf = [&](const std::string& bytes, const std::string& shown) {
            const auto found = vocab.ids.find(bytes);
            if (found == vocab.ids.end())
                fail(sourceName, " line ", lineNumber, ": \"", shown,
                     "\" is not in the vocab; vocab.json and merges.txt must come from the same tokenizer");
            return found->second;
        };
        merges.push_back({idOf(left, line.substr(0, space)), idOf(right, line.substr(space + 1)),
                          idOf(left + right, line.substr(0, space) + line.substr(space + 1))});
    }
    return merges;
}

}  // namespace gpt2

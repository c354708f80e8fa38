#pragma once
// Every model file the engine reads, whatever its format (a GGUF file, or a safetensors file of a
// Hugging Face checkpoint), as one list of stored tensors: GPT-2's name for each, its shape, its
// storage type and where its bytes lie. This is the one place that tells the formats apart; the
// uploader (model/weight_ingest.h) and the web loader see only the list.
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/ggml_type.h"
#include "format/gguf.h"
#include "format/model_config.h"
#include "format/safetensors.h"

namespace gpt2 {

// A tensor as its file stores it.
struct StoredTensor {
    std::string name;                 // GPT-2's Hugging Face name without "transformer."; "" for one GPT-2 has not
    std::string storedName;           // the file's own name, for messages and for the web loader's requests
    std::vector<std::int64_t> shape;  // in Hugging Face's order
    GgmlType type = GgmlType::F32;    // F32, F16, BF16, I8 (safetensors, refused as a weight) or a block type
    bool transposed = false;          // the bytes hold [shape[1], shape[0]] (GGUF's Conv1D weights)
    std::uint64_t begin = 0;          // absolute byte offsets in the file
    std::uint64_t end = 0;
};

struct ModelFileHeader {
    std::string label;                  // names the file in every message
    std::vector<StoredTensor> tensors;  // in file order
    // A file that is a whole model (GGUF) carries its config and tokenizer; a checkpoint's safetensors
    // file carries neither (they are config.json, vocab.json and merges.txt beside it).
    std::optional<ModelConfig> config;
    std::vector<std::string> tokens, merges;
    // What the expected shapes come from, for messages: "config.json" or "the gpt2.* metadata".
    std::string shapesFrom;
    bool gguf = false;
    std::map<std::string, std::string> metadata;  // a safetensors file's __metadata__

    // The file's own name for a GPT-2 tensor, for a message about one it lacks.
    std::string storedNameOf(const std::string& name) const;
};

// The header of the model file whose first `size` bytes lie at `bytes` (of a file of `fileSize`),
// told apart by its magic. Returns nothing when those bytes end inside the header, so a streaming
// caller reads more and tries again; throws on anything malformed.
std::optional<ModelFileHeader> parseModelFileHeader(const std::uint8_t* bytes, std::size_t size, std::uint64_t fileSize,
                                                    const std::string& label);
// Throws naming the first tensor of a GPT-2 model of `config` that none of `files` holds (GPT-2's
// tensors, by name: whether their shapes fit is the uploader's check).
void requireEveryTensor(const ModelConfig& config, const std::vector<const ModelFileHeader*>& files);
// True when a file's first bytes say that it is a whole model (GGUF's magic).
bool isWholeModelFile(const std::uint8_t* prefix, std::size_t size);
// A model given as one file must be a whole model: a checkpoint's lone safetensors file (or a file of
// the retired packed format) is refused with what to load instead.
void requireWholeModel(const ModelFileHeader& header);

// A model file on disk, read tensor by tensor (a 1.5B model never has to fit in memory).
class ModelFileReader {
public:
    explicit ModelFileReader(const std::string& path);
    const ModelFileHeader& header() const { return header_; }
    std::vector<std::uint8_t> read(const StoredTensor& tensor) const;

private:
    mutable std::ifstream stream_;  // before header_, which is read from it
    ModelFileHeader header_;
};

// A model on disk: a whole-model file (GGUF), or a Hugging Face checkpoint folder's config.json and
// safetensors files, each file's header read and every GPT-2 tensor found in one of them.
struct ModelOnDisk {
    bool oneFile = false;
    ModelConfig config;
    std::vector<std::unique_ptr<ModelFileReader>> files;
    std::vector<const ModelFileHeader*> headers() const;
};
ModelOnDisk openModelOnDisk(const std::string& path);

}  // namespace gpt2

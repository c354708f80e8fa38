#include "format/checkpoint.h"

#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"
#include "util/file.h"

namespace gpt2 {
namespace {

std::vector<std::string> shardFiles(const std::string& indexPath) {
    nlohmann::json index;
    try {
        index = nlohmann::json::parse(readTextFile(indexPath));
    } catch (const nlohmann::json::exception& e) {
        fail(indexPath, ": not valid JSON (", e.what(), ")");
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
        fail(indexPath, ": expected an object with a \"weight_map\" of tensor name -> shard file");
    std::set<std::string> files;
    for (auto& [tensor, file] : index["weight_map"].items()) {
        if (!file.is_string()) fail(indexPath, ": weight_map entry for ", tensor, " must be a file name");
        const auto name = file.get<std::string>();
        if (name.find('/') != std::string::npos || name.find("..") != std::string::npos)
            fail(indexPath, ": shard name \"", name, "\" must be a plain file name in the same folder");
        files.insert(name);
    }
    return {files.begin(), files.end()};
}

}  // namespace

ModelConfig checkpointConfig(const std::string& dir) {
    const std::string configPath = joinPath(dir, "config.json");
    if (!fileExists(configPath)) fail(dir, ": no config.json; expected a Hugging Face GPT-2 checkpoint folder");
    return parseModelConfig(readTextFile(configPath), configPath);
}

std::vector<std::string> checkpointWeightFiles(const std::string& dir) {
    const std::string single = joinPath(dir, "model.safetensors");
    const std::string index = joinPath(dir, "model.safetensors.index.json");
    if (fileExists(single)) return {single};
    if (!fileExists(index))
        fail(
            dir,
            ": neither model.safetensors nor model.safetensors.index.json found (PyTorch .bin files are not supported; "
            "convert with save_pretrained(safe_serialization=True))");
    std::vector<std::string> paths;
    for (const auto& shard : shardFiles(index)) paths.push_back(joinPath(dir, shard));
    return paths;
}

HuggingFaceCheckpoint::HuggingFaceCheckpoint(const std::string& dir) : dir_(dir), config_(checkpointConfig(dir)) {
    for (const std::string& path : checkpointWeightFiles(dir))
        files_.push_back(std::make_unique<SafetensorsFile>(path));
}

bool HuggingFaceCheckpoint::locate(const std::string& name, Located& out) const {
    for (const auto& file : files_) {
        for (const std::string& candidate : {"transformer." + name, name}) {
            if (const TensorInfo* info = file->header().find(candidate)) {
                out = {file.get(), info};
                return true;
            }
        }
    }
    return false;
}

bool HuggingFaceCheckpoint::has(const std::string& name) const {
    Located located{};
    return locate(name, located);
}

HuggingFaceCheckpoint::Located HuggingFaceCheckpoint::locateFloats(
    const std::string& name, const std::vector<std::int64_t>& expectedShape) const {
    Located located{};
    if (!locate(name, located))
        fail(dir_, ": tensor ", name, " (or transformer.", name, ") is missing from the checkpoint");
    if (located.info->shape != expectedShape)
        fail(located.file->header().label, ": tensor ", located.info->name, " has shape ",
             shapeText(located.info->shape), ", expected ", shapeText(expectedShape), " from config.json");
    requireFloatTensor(*located.info, located.file->header().label);
    return located;
}

std::vector<float> HuggingFaceCheckpoint::read(const std::string& name,
                                               const std::vector<std::int64_t>& expectedShape) const {
    const Located located = locateFloats(name, expectedShape);
    return located.file->readFloats(*located.info);
}

HuggingFaceCheckpoint::Stored HuggingFaceCheckpoint::readStored(const std::string& name,
                                                                const std::vector<std::int64_t>& expectedShape) const {
    const Located located = locateFloats(name, expectedShape);
    return {located.info->dtype, located.file->readRaw(*located.info)};
}

}  // namespace gpt2

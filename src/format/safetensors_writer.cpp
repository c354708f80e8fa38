#include "format/safetensors_writer.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/half.h"

namespace gpt2 {

void writeSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                      const std::function<std::vector<float>(std::size_t)>& produce,
                      const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json header;
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    for (const auto& t : tensors) {
        if (t.dtype == DType::BF16) fail(path, ": writing BF16 is not supported");
        std::uint64_t elements = 1;
        for (auto d : t.shape) elements *= std::uint64_t(d);
        const std::uint64_t bytes = elements * dtypeSize(t.dtype);
        header[t.name] = {
            {"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    while (text.size() % 8 != 0) text += ' ';  // the format recommends 8-byte alignment of the data

    std::ofstream out(path, std::ios::binary);
    if (!out) fail(path, ": cannot create file");
    const std::uint64_t length = text.size();
    for (int i = 0; i < 8; ++i) out.put(char((length >> (8 * i)) & 0xff));
    out.write(text.data(), std::streamsize(text.size()));
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const std::vector<float> values = produce(i);
        std::uint64_t elements = 1;
        for (auto d : tensors[i].shape) elements *= std::uint64_t(d);
        if (values.size() != elements)
            fail(path, ": tensor ", tensors[i].name, " got ", values.size(), " values, expected ", elements);
        if (tensors[i].dtype == DType::F32) {
            out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
        } else if (tensors[i].dtype == DType::I8) {
            std::vector<std::int8_t> bytes(values.size());
            for (std::size_t j = 0; j < values.size(); ++j) {
                if (!(values[j] >= -128 && values[j] <= 127) || values[j] != std::trunc(values[j]))
                    fail(path, ": tensor ", tensors[i].name, " is I8 but value ", j, " is ", values[j]);
                bytes[j] = std::int8_t(values[j]);
            }
            out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        } else {
            std::vector<std::uint16_t> halves(values.size());
            for (std::size_t j = 0; j < values.size(); ++j) halves[j] = floatToHalf(values[j]);
            out.write(reinterpret_cast<const char*>(halves.data()), std::streamsize(halves.size() * 2));
        }
    }
    if (!out) fail(path, ": write failed (disk full?)");
}

}  // namespace gpt2

#pragma once
// The shared main() of the native tools: a failure is one line on stderr, "TOOL: message", and exit 1.
#include <exception>
#include <iostream>

namespace gpt2 {

template <typename Run>
int runTool(const char* tool, int argc, char** argv, Run run) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << tool << ": " << e.what() << "\n";
        return 1;
    }
}

}  // namespace gpt2

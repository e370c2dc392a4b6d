// SPDX-License-Identifier: MIT
// How a command fails: one line on stderr and the exit code for input that cannot be read.
#include "commands.h"

#include <iostream>

int failWith(const std::string& message)
{
    std::string line = message;
    for (char& c : line) {
        if (c == '\n')
            c = ' ';
    }
    std::cerr << "ckpt: " << line << std::endl;
    return kExitUnreadable;
}

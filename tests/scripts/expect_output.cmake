# Runs a command and checks both its exit code and its output, which CTest's
# PASS_REGULAR_EXPRESSION alone cannot: with it, CTest ignores the exit code, so a crash after
# the expected message passes. Usage:
#   cmake -DEXPECT_RC=2 -DEXPECT_OUTPUT=regex -DCOMMAND=prog;arg;arg -P expect_output.cmake
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
    message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}")
endif()
if(NOT all MATCHES "${EXPECT_OUTPUT}")
    message(FATAL_ERROR "the output does not match '${EXPECT_OUTPUT}'")
endif()

# corpus.status: says in one line whether the corpus tests read the shared corpus or skipped (a
# QSKIP passes in CTest, so a green run says nothing about them), and fails when $CKPT_CORPUS names
# a corpus that is not there: set it where the corpus is meant to be (CI).
#   cmake -DCORPUS_DEFAULT=dir -DSUITES="a b c" -P corpus_status.cmake
set(dir "${CORPUS_DEFAULT}")
set(required FALSE)
if(DEFINED ENV{CKPT_CORPUS} AND NOT "$ENV{CKPT_CORPUS}" STREQUAL "")
    set(dir "$ENV{CKPT_CORPUS}")
    set(required TRUE)
endif()
set(files "")
if(IS_DIRECTORY "${dir}")
    file(GLOB_RECURSE files LIST_DIRECTORIES false "${dir}/*")
endif()
list(LENGTH files count)
if(count GREATER 0)
    message("corpus: ${dir} (${count} files): the corpus checks of ${SUITES} read it")
elseif(required)
    message(FATAL_ERROR "corpus: CKPT_CORPUS=${dir} is missing or empty: the corpus checks of ${SUITES} would all skip")
else()
    message("corpus: NOT PRESENT at ${dir}: the corpus checks of ${SUITES} SKIP (set CKPT_CORPUS to require it)")
endif()

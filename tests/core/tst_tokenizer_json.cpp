// SPDX-License-Identifier: MIT
// The token ids a tokenizer can produce, read from tokenizer.json in each model type's
// serialization (a map of ids, or for Unigram a list whose positions are the ids) and from
// tokenizer_config.json's added_tokens_decoder, without building the document.
#include "ckpt/formats/tokenizer_json.h"
#include "ckpt/io/errors.h"

#include <QtTest>

using ckpt::TokenizerIds;

class TestTokenizerJson : public QObject {
    Q_OBJECT
private slots:
    void bpeVocabularyAndAddedTokens()
    {
        // merges as lists of pairs (tokenizers >= 0.20) must not be taken for vocabulary
        const TokenizerIds ids = ckpt::tokenizerJsonIds(R"({"version":"1.0","added_tokens":[{"id":0,"content":"<unk>"},
            {"id":5,"content":"<|end|>","special":true}],"model":{"type":"BPE","vocab":{"<unk>":0,"a":1,"b":2,"ab":3},
            "merges":[["a","b"]]}})");
        QCOMPARE(ids.modelType, std::string("BPE"));
        QCOMPARE(ids.vocabEntries, int64_t(4));
        QCOMPARE(ids.addedTokens, int64_t(2));
        QCOMPARE(ids.maxId, std::optional<int64_t>(5));
    }
    void unigramIdsArePositions()
    {
        const TokenizerIds ids = ckpt::tokenizerJsonIds(R"({"added_tokens":[],"model":{"type":"Unigram","unk_id":0,
            "vocab":[["<unk>",0.0],["\u2581a",-1.5],["b",-2.0]]}})");
        QCOMPARE(ids.modelType, std::string("Unigram"));
        QCOMPARE(ids.vocabEntries, int64_t(3));
        QCOMPARE(ids.maxId, std::optional<int64_t>(2));
    }
    void configAddedTokensDecoder()
    {
        const TokenizerIds ids = ckpt::tokenizerConfigIds(R"({"added_tokens_decoder":{"128000":{"content":"<|begin_of_text|>"},
            "128009":{"content":"<|eot_id|>"},"x":{"content":"not an id"}},"model_max_length":131072})");
        QCOMPARE(ids.addedTokens, int64_t(2));
        QCOMPARE(ids.maxId, std::optional<int64_t>(128009));
    }
    void nothingToCount()
    {
        QVERIFY(!ckpt::tokenizerJsonIds(R"({"model":{"type":"WordLevel","vocab":{}}})").maxId);
        QVERIFY(!ckpt::tokenizerConfigIds(R"({"tokenizer_class":"GPT2Tokenizer"})").maxId);
    }
    void notJson()
    {
        QVERIFY_THROWS_EXCEPTION(ckpt::FormatError, ckpt::tokenizerJsonIds(R"({"model":{"vocab":{"a":1,)"));
        QVERIFY_THROWS_EXCEPTION(ckpt::FormatError, ckpt::tokenizerConfigIds("not json"));
    }
};

QTEST_GUILESS_MAIN(TestTokenizerJson)
#include "tst_tokenizer_json.moc"

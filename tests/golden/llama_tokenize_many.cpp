// Tokenize many texts with llama.cpp's vocabulary (vocab_only), for ubpe's golden fixtures.
// stdin: u32 count, then per text: u8 flags (1 add_special, 2 parse_special), u32 length, bytes.
// stdout: per text: u32 n_ids, i32 ids..., u32 length, detokenized bytes
//         (llama_detokenize(remove_special=false, unparse_special=true)).
#include "llama.h"
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

static bool read_exact(void * p, size_t n) { return fread(p, 1, n, stdin) == n; }
static void write_u32(uint32_t v) { fwrite(&v, 4, 1, stdout); }

int main(int argc, char ** argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s model.gguf < texts\n", argv[0]); return 2; }
    llama_backend_init();
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    auto params = llama_model_default_params();
    params.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[1], params);
    if (!model) { fprintf(stderr, "cannot load %s\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    uint32_t count;
    if (!read_exact(&count, 4)) return 1;
    for (uint32_t k = 0; k < count; ++k) {
        uint8_t flags; uint32_t len;
        if (!read_exact(&flags, 1) || !read_exact(&len, 4)) return 1;
        std::string text(len, '\0');
        if (len && !read_exact(&text[0], len)) return 1;
        std::vector<llama_token> ids(len + 16);
        int n = llama_tokenize(vocab, text.data(), (int32_t) len, ids.data(), (int32_t) ids.size(), flags & 1, flags & 2);
        if (n < 0) { ids.resize(-n); n = llama_tokenize(vocab, text.data(), (int32_t) len, ids.data(), (int32_t) ids.size(), flags & 1, flags & 2); }
        ids.resize(n);
        write_u32((uint32_t) n);
        fwrite(ids.data(), 4, n, stdout);
        std::string out(len * 4 + 64, '\0');
        int m = llama_detokenize(vocab, ids.data(), n, &out[0], (int32_t) out.size(), false, true);
        if (m < 0) { out.resize(-m); m = llama_detokenize(vocab, ids.data(), n, &out[0], (int32_t) out.size(), false, true); }
        out.resize(m);
        write_u32((uint32_t) m);
        fwrite(out.data(), 1, m, stdout);
    }
    fflush(stdout);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}

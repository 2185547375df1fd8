/*
 * An index of the report's words: tokens split at punctuation
 * (strcspn/strspn), counted in a std::unordered_map<std::string, unsigned>,
 * the distinct ones in a std::set<std::string>, the frequent ones sorted
 * in a std::vector with std::sort, the rare ones erased from the map
 * (rebalancing, rehashing). Returns a value over what is left.
 */
#include "heavy.h"

#include <algorithm>
#include <set>
#include <string.h>
#include <unordered_map>
#include <vector>

namespace heavy {

uint32_t index_words(const std::string &report)
{
    std::unordered_map<std::string, unsigned> freq;
    std::set<std::string> words;
    const char *s = report.c_str();
    static const char kSep[] = "{}[]\":,";
    while (*s) {
        s += strspn(s, kSep);
        size_t len = strcspn(s, kSep);
        if (!len)
            break;
        std::string w(s, len);
        freq[w]++;
        words.insert(std::move(w));
        s += len;
    }
    std::vector<std::pair<unsigned, std::string>> top;
    for (const auto &kv : freq)
        if (kv.second > 1)
            top.emplace_back(kv.second, kv.first);
    std::sort(top.begin(), top.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (auto it = words.begin(); it != words.end();) {
        if (freq[*it] == 1) {
            freq.erase(*it);
            it = words.erase(it);
        } else {
            ++it;
        }
    }
    uint32_t h = 0x9e3779b9u ^ (uint32_t)words.size() ^ ((uint32_t)freq.size() << 16);
    for (size_t i = 0; i < top.size() && i < 16; i++) {
        const std::string &w = top[i].second;
        h = (h ^ top[i].first) * 16777619u;
        for (char c : w)
            h = (h ^ (unsigned char)c) * 16777619u;
    }
    return h;
}

} // namespace heavy

#include "library_views.h"

#include <cstdlib>
#include <sstream>

namespace tidesql {
namespace {

// The text of "name=<text>" up to the next space ("" if absent).
std::string word_field(const std::string& line, const char* name) {
  std::string key = std::string(name) + "=";
  size_t at = 0;
  while ((at = line.find(key, at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ') {
      size_t begin = at + key.size(), end = line.find(' ', begin);
      return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
    at += key.size();
  }
  return "";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

unsigned long long property_field(const std::string& text, const char* name) {
  std::string key = std::string(name) + "=";
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n')
      return strtoull(text.c_str() + at + key.size(), nullptr, 10);
    at += key.size();
  }
  return 0;
}

std::vector<SstFile> sst_files(tidesdb::DB* db, tidesdb::ColumnFamilyHandle* cf) {
  std::vector<SstFile> files;
  std::string text;
  if (!db->GetProperty(cf, "tidesdb.sst-files", &text)) return files;
  for (const std::string& line : lines_of(text)) {
    SstFile f;
    f.level = static_cast<int>(property_field(line, "level"));
    f.file_number = property_field(line, "file");
    f.file_size = property_field(line, "size");
    f.entries = property_field(line, "entries");
    f.tombstones = property_field(line, "tombstones");
    f.value_log_bytes = property_field(line, "value_log_bytes");
    f.smallest_sequence = property_field(line, "smallest_seq");
    f.largest_sequence = property_field(line, "largest_seq");
    f.smallest_key_hex = word_field(line, "smallest");
    f.largest_key_hex = word_field(line, "largest");
    files.push_back(std::move(f));
  }
  return files;
}

std::vector<CompactionRecord> compactions(tidesdb::DB* db) {
  std::vector<CompactionRecord> list;
  std::string text;
  if (!db->GetProperty(nullptr, "tidesdb.compactions", &text)) return list;
  for (const std::string& line : lines_of(text)) {
    CompactionRecord c;
    c.id = property_field(line, "id");
    c.cf_id = static_cast<uint32_t>(property_field(line, "cf"));
    c.state = word_field(line, "state");
    c.reason = word_field(line, "reason");
    c.manual = property_field(line, "manual") != 0;
    c.move = property_field(line, "move") != 0;
    c.level = static_cast<int>(property_field(line, "level"));
    c.output_level = static_cast<int>(property_field(line, "output_level"));
    c.input_files = property_field(line, "input_files");
    c.input_bytes = property_field(line, "input_bytes");
    c.output_files = property_field(line, "output_files");
    c.output_bytes = property_field(line, "output_bytes");
    c.start_micros = property_field(line, "start_micros");
    c.end_micros = property_field(line, "end_micros");
    size_t status = line.find(" status=");
    if (status != std::string::npos) c.status = line.substr(status + 8);
    list.push_back(std::move(c));
  }
  return list;
}

}  // namespace tidesql

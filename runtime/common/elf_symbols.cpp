#include "runtime/common/elf_symbols.hpp"

#include <elf.h>

#include <cstring>

namespace flint {

namespace {

/// A bounds-checked copy of a T at `offset`: ELF offsets come from the file, so every one is
/// checked against its size before it is read.
template <class T>
bool read_at(std::string_view bytes, std::uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

error malformed(const std::string& what) {
  return make_error(errc::malformed_message, "Not a 64-bit little-endian ELF library: " + what);
}

} // namespace

expected<std::vector<std::string>> exported_functions(std::string_view bytes,
                                                      std::string_view prefix) {
  Elf64_Ehdr header;
  if (!read_at(bytes, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return malformed("no ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return malformed("not ELFCLASS64/ELFDATA2LSB");
  if (header.e_shentsize != sizeof(Elf64_Shdr))
    return malformed("section header size " + std::to_string(header.e_shentsize));

  std::vector<std::string> names;
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symbols;
    if (!read_at(bytes, header.e_shoff + i * sizeof(Elf64_Shdr), symbols))
      return malformed("section header " + std::to_string(i) + " outside the file");
    if (symbols.sh_type != SHT_DYNSYM)
      continue;
    Elf64_Shdr strings;
    if (symbols.sh_link >= header.e_shnum
        || !read_at(bytes, header.e_shoff + symbols.sh_link * sizeof(Elf64_Shdr), strings))
      return malformed("the dynamic symbols' string table is outside the file");
    if (strings.sh_offset > bytes.size() || bytes.size() - strings.sh_offset < strings.sh_size)
      return malformed("the dynamic string table is outside the file");
    const std::string_view table = bytes.substr(strings.sh_offset, strings.sh_size);
    if (symbols.sh_entsize != sizeof(Elf64_Sym))
      return malformed("dynamic symbol size " + std::to_string(symbols.sh_entsize));
    for (std::uint64_t s = 0; s < symbols.sh_size / sizeof(Elf64_Sym); ++s) {
      Elf64_Sym symbol;
      if (!read_at(bytes, symbols.sh_offset + s * sizeof(Elf64_Sym), symbol))
        return malformed("dynamic symbol " + std::to_string(s) + " outside the file");
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || ELF64_ST_BIND(symbol.st_info) != STB_GLOBAL
          || ELF64_ST_VISIBILITY(symbol.st_other) != STV_DEFAULT || symbol.st_shndx == SHN_UNDEF)
        continue;
      if (symbol.st_name >= table.size())
        return malformed("a symbol name outside the string table");
      auto rest = table.substr(symbol.st_name);
      auto name = rest.substr(0, rest.find('\0'));
      if (name.size() == rest.size())
        return malformed("a symbol name without its end");
      if (name.starts_with(prefix))
        names.emplace_back(name);
    }
  }
  return names;
}

} // namespace flint

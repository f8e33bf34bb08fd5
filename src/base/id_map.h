// Values keyed by an increasing id, some of which are forgotten over time: the
// jobs of a server that keeps finished jobs only for a retention period.
//
// Values are stored densely in id order, so iterating touches only live ones
// and lookups are two array reads: a page of slot numbers per kPageSize ids,
// then the value. A page is freed once every value of its ids is erased, so
// memory follows the live values, not every id ever issued; a job that runs
// for weeks keeps one small page alive, not the history around it.
//
// Ids are added in increasing order, except ids that were skipped over
// (SkipTo) and never given a value: those may be added later, out of order
// (a job array reserves its elements' ids and fills them as they start).
// values() is in the order added. Erasing is done in batches, each one
// compacting the storage once, or one at a time for the value added last.
// Until an id is first skipped or erased (all of a simulation, a server's
// first days) a value's slot is its id, and lookups read the value directly:
// the scheduler looks jobs up by id in its innermost loops.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

namespace tessera {

template <typename Id, typename T>
class IdMap {
 public:
  static constexpr std::size_t kPageBits = 10;
  static constexpr std::size_t kPageSize = std::size_t{1} << kPageBits;

  IdMap() = default;
  IdMap(IdMap&&) noexcept = default;
  IdMap& operator=(IdMap&&) noexcept = default;
  // A copy owns copies of the pages (the server copies its scheduler state).
  IdMap(const IdMap& other)
      : values_(other.values_), ids_(other.ids_), page_live_(other.page_live_), end_(other.end_), dense_(other.dense_) {
    pages_.reserve(other.pages_.size());
    for (const auto& page : other.pages_) pages_.push_back(page ? std::make_unique<Page>(*page) : nullptr);
  }
  IdMap& operator=(const IdMap& other) {
    if (this != &other) *this = IdMap(other);
    return *this;
  }

  T& at(Id id) { return values_[SlotOf(id)]; }
  const T& at(Id id) const { return values_[SlotOf(id)]; }
  bool contains(Id id) const { return id.valid() && FindSlot(id) != kNone; }
  T* find(Id id) { return contains(id) ? &at(id) : nullptr; }

  // Every live value, in the order added (id order, but for ids filled in below end()).
  const std::vector<T>& values() const { return values_; }
  std::size_t size() const { return values_.size(); }

  // One past the highest id ever added or skipped: the next id to hand out.
  Id end() const { return Id(static_cast<typename Id::rep_type>(end_)); }
  // Ids below `next` are never to be handed out again, though they hold no
  // value here (they were erased in an earlier life of the table).
  void SkipTo(Id next) {
    if (next.index() > end_) {
      end_ = next.index();
      dense_ = false;
    }
  }

  // Adds `value` under `id`: one not below end(), or one below it that was
  // skipped and holds no value.
  T& Add(Id id, T value) {
    assert(id.index() >= end_ || !contains(id));
    dense_ = dense_ && id.index() == end_;
    const std::size_t page = id.index() >> kPageBits;
    if (pages_.size() <= page) {
      pages_.resize(page + 1);
      page_live_.resize(page + 1, 0);
    }
    if (!pages_[page]) {
      pages_[page] = std::make_unique<Page>();
      pages_[page]->fill(kNone);
    }
    (*pages_[page])[id.index() & (kPageSize - 1)] = static_cast<std::uint32_t>(values_.size());
    ++page_live_[page];
    end_ = std::max(end_, id.index() + 1);
    ids_.push_back(id);
    values_.push_back(std::move(value));
    return values_.back();
  }

  // Erases the value added last, which `id` must name (a statement's
  // rollback takes back what it added, newest first). Its id stays taken.
  void EraseLast(Id id) {
    assert(!ids_.empty() && ids_.back() == id);
    const std::size_t page = id.index() >> kPageBits;
    (*pages_[page])[id.index() & (kPageSize - 1)] = kNone;
    if (--page_live_[page] == 0) pages_[page].reset();
    ids_.pop_back();
    values_.pop_back();
    dense_ = false;
  }

  // Erases the values of `ids` (each present).
  void Erase(std::vector<Id> ids) {
    std::sort(ids.begin(), ids.end());
    EraseIf([&](Id id, const T&) { return std::binary_search(ids.begin(), ids.end(), id); });
  }

  // Erases the values of every id for which `erase(id, value)` is true.
  template <typename Pred>
  std::size_t EraseIf(Pred erase) {
    std::size_t kept = 0;
    for (std::size_t slot = 0; slot < values_.size(); ++slot) {
      const Id id = ids_[slot];
      if (erase(id, static_cast<const T&>(values_[slot]))) {
        const std::size_t page = id.index() >> kPageBits;
        (*pages_[page])[id.index() & (kPageSize - 1)] = kNone;
        if (--page_live_[page] == 0) pages_[page].reset();
        continue;
      }
      if (kept != slot) {
        values_[kept] = std::move(values_[slot]);
        ids_[kept] = id;
        (*pages_[id.index() >> kPageBits])[id.index() & (kPageSize - 1)] = static_cast<std::uint32_t>(kept);
      }
      ++kept;
    }
    const std::size_t erased = values_.size() - kept;
    dense_ = dense_ && erased == 0;
    values_.erase(values_.begin() + static_cast<std::ptrdiff_t>(kept), values_.end());
    ids_.resize(kept);
    return erased;
  }

 private:
  using Page = std::array<std::uint32_t, kPageSize>;
  static constexpr std::uint32_t kNone = UINT32_MAX;

  std::uint32_t FindSlot(Id id) const {
    if (dense_) return id.index() < end_ ? static_cast<std::uint32_t>(id.index()) : kNone;
    const std::size_t page = id.index() >> kPageBits;
    return page < pages_.size() && pages_[page] ? (*pages_[page])[id.index() & (kPageSize - 1)] : kNone;
  }
  std::size_t SlotOf(Id id) const {
    assert(contains(id));
    if (dense_) return id.index();
    return (*pages_[id.index() >> kPageBits])[id.index() & (kPageSize - 1)];
  }

  std::vector<T> values_;
  std::vector<Id> ids_;                        // parallel to values_
  std::vector<std::unique_ptr<Page>> pages_;   // by id >> kPageBits; null when none of its ids has a value
  std::vector<std::uint32_t> page_live_;       // values held per page
  std::size_t end_ = 0;
  bool dense_ = true;  // every id below end_ has a value, at the slot of its number
};

}  // namespace tessera

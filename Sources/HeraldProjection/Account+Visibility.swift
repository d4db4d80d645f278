import HeraldEvents

extension Account {
    /// Marks `group` as touched by the current event, saving what the client saw of it; in
    /// a replay without updates, lists it in ``staleGroups`` instead. Call before the first
    /// change to the group.
    @inline(__always)
    mutating func touch(_ group: Int, _ scratch: inout EventScratch) {
        guard groups[group].dirtyIndex < 0 else { return }
        guard scratch.savesShownBefore else {
            groups[group].dirtyIndex = Int32(staleGroups.count)
            staleGroups.append(Int32(group))
            return
        }
        groups[group].dirtyIndex = Int32(scratch.dirty.count)
        let start = scratch.savedShown.count
        if groups[group].isVisible {
            // Indexing in place: a copy of the list would retain and release it.
            let count = groups[group].active.count
            for i in max(0, count - groupSizeMax)..<count { scratch.savedShown.append(groups[group].active[i].id) }
        }
        scratch.dirty.append(
            DirtyGroup(
                group: Int32(group), totalBefore: Int32(totalCount(of: group)),
                shownStart: Int32(start), shownEnd: Int32(scratch.savedShown.count)))
    }

    /// Gives `group` its current candidate key in ``candidates``, leaving the old one stale;
    /// returns whether the key changed. Afterwards the top key is live.
    mutating func refreshCandidate(_ group: Int) -> Bool {
        let newDate = groups[group].lastDate
        let oldDate = groups[group].candidateDate
        if newDate == oldDate { return false }
        groups[group].candidateDate = newDate
        if oldDate != nil { candidateList.stale += 1 }
        if let newDate {
            let key = CandidateKey(date: newDate, group: Int32(group))
            let position = candidatePosition(key)
            if position < candidates.count && candidates[position] == key {
                // A stale key of the group's with this very date is live again.
                candidateList.stale -= 1
            } else {
                candidates.insertOrAppend(key, at: position)
            }
        }
        dropStaleCandidates()
        return true
    }

    /// Drops the stale keys at the top of ``candidates``, and all of them when they make up
    /// more than a quarter of the list (plus 16).
    @inline(__always)
    mutating func dropStaleCandidates() {
        while let last = candidates.last, !isLive(last) {
            candidates.removeLast()
            candidateList.stale -= 1
        }
        guard candidateList.stale * 4 > candidates.count + 64 else { return }
        dropAllStaleCandidates()
    }

    /// Drops every stale key of ``candidates``: what is left depends on the state alone, not
    /// on the order of the events that led to it.
    mutating func dropAllStaleCandidates() {
        guard candidateList.stale > 0 else { return }
        var kept = 0
        for i in 0..<candidates.count {
            let key = candidates[i]
            if isLive(key) {
                candidates[kept] = key
                kept += 1
            }
        }
        candidates.removeLast(candidates.count - kept)
        candidateList.stale = 0
    }

    /// The position of `key` in ``candidates``, or where it would go.
    @inline(__always)
    func candidatePosition(_ key: CandidateKey) -> Int {
        if let last = candidates.last, last < key { return candidates.count }
        var low = 0
        var high = candidates.count
        while low < high {
            let mid = (low + high) >> 1
            if candidates[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Moves the visible list on in place for the common events, where one group changed:
    /// it became the top candidate (it moves to the front, maybe pushing the last one out), or
    /// it stays out of view. Returns `handled: false` when the general recomputation is needed.
    /// Visibility flags are left to the caller.
    mutating func advanceViewQuickly(_ scratch: inout EventScratch) -> (handled: Bool, entered: Int32, left: Int32) {
        guard !scratch.optionsChanged, scratch.dirty.count == 1 else { return (false, -1, -1) }
        let g = scratch.dirty[0].group
        let countMax = groupCountMax
        if countMax == 0 { return (true, -1, -1) }
        if let top = candidates.last, top.group == g {
            // The group's flag says whether the list holds it: no search when it does not.
            if groups[Int(g)].isVisible, let p = visible.firstIndex(of: g) {
                if p > 0 {
                    visible.withUnsafeMutableBufferPointer { list in
                        var j = p
                        while j > 0 {
                            list[j] = list[j - 1]
                            j -= 1
                        }
                        list[0] = g
                    }
                }
                return (true, -1, -1)
            }
            // In at the front, in one shift: the last group falls out of a full list.
            var left: Int32 = -1
            if visible.count == countMax { left = visible[countMax - 1] } else { visible.append(g) }
            visible.withUnsafeMutableBufferPointer { list in
                var j = list.count - 1
                while j > 0 {
                    list[j] = list[j - 1]
                    j -= 1
                }
                list[0] = g
            }
            return (true, g, left)
        }
        if !groups[Int(g)].isVisible, visible.count == countMax, let last = visible.last,
            let lastDate = groups[Int(last)].candidateDate
        {
            guard let date = groups[Int(g)].candidateDate else { return (true, -1, -1) }
            if CandidateKey(date: date, group: g) < CandidateKey(date: lastDate, group: last) { return (true, -1, -1) }
        }
        return (false, -1, -1)
    }

    /// Moves the view on without computing updates, for the groups in `scratch.dirty`
    /// whose candidates are already refreshed, and clears the scratch.
    private mutating func finishEventWithoutUpdates(candidatesChanged: Bool, _ scratch: inout EventScratch) {
        let quick = candidatesChanged ? advanceViewQuickly(&scratch) : (handled: true, entered: -1, left: -1)
        if quick.handled {
            if quick.left >= 0 { groups[Int(quick.left)].isVisible = false }
            if quick.entered >= 0 { groups[Int(quick.entered)].isVisible = true }
        } else {
            collectTopCandidates(&scratch)
            if scratch.nextVisible != visible {
                for g in visible where !scratch.nextVisible.contains(g) { groups[Int(g)].isVisible = false }
                for g in scratch.nextVisible where !visible.contains(g) { groups[Int(g)].isVisible = true }
            }
            swap(&visible, &scratch.nextVisible)
            scratch.nextVisible.removeAll(keepingCapacity: true)
        }
        for i in 0..<scratch.dirty.count { groups[Int(scratch.dirty[i].group)].dirtyIndex = -1 }
        scratch.dirty.removeAll()
        scratch.savedShown.removeAll()
        scratch.createdId = 0
        scratch.createdSilent = false
        scratch.contentChangedId = 0
        scratch.optionsChanged = false
        scratch.previousGroupSizeMax = nil
    }

    /// Ends an event replayed without updates: the groups it touched stay in
    /// ``staleGroups`` and the view is left stale, for ``settleView(_:)``.
    @inline(__always)
    mutating func deferView(_ scratch: inout EventScratch) -> [Update] {
        scratch.createdId = 0
        scratch.createdSilent = false
        scratch.contentChangedId = 0
        return []
    }

    /// Brings the view (candidates, visible groups) up to date with every group touched since
    /// it was last settled; does nothing when it is current.
    mutating func settleView(_ scratch: inout EventScratch) {
        guard viewIsStale else { return }
        // The stale groups become the dirty groups of one event without updates (their
        // `dirtyIndex` is their position in both lists).
        for group in staleGroups {
            scratch.dirty.append(DirtyGroup(group: group, totalBefore: 0, shownStart: 0, shownEnd: 0))
        }
        scratch.optionsChanged = staleOptions
        staleGroups = []
        staleOptions = false
        var candidatesChanged = scratch.optionsChanged
        if scratch.dirty.count <= 4 {
            for i in 0..<scratch.dirty.count where refreshCandidate(Int(scratch.dirty[i].group)) { candidatesChanged = true }
        } else if refreshCandidatesTogether(&scratch) {
            candidatesChanged = true
        }
        finishEventWithoutUpdates(candidatesChanged: candidatesChanged, &scratch)
    }

    /// ``refreshCandidate(_:)`` for every dirty group at once: one merge of the candidates
    /// with the changed keys, instead of a move along the list for each. Returns whether a
    /// key changed. Leaves the `dirtyIndex` of groups whose key did not change at -1.
    private mutating func refreshCandidatesTogether(_ scratch: inout EventScratch) -> Bool {
        var fresh: [CandidateKey] = []
        var changed = false
        for entry in scratch.dirty {
            let group = Int(entry.group)
            let newDate = groups[group].lastDate
            if newDate == groups[group].candidateDate {
                groups[group].dirtyIndex = -1
                continue
            }
            changed = true
            if let newDate { fresh.append(CandidateKey(date: newDate, group: entry.group)) }
            groups[group].candidateDate = newDate
        }
        guard changed else { return false }
        fresh.sort()
        // The old keys of changed groups (those still marked dirty) leave; the new ones merge in.
        var merged: [CandidateKey] = []
        merged.reserveCapacity(candidates.count + fresh.count)
        var next = 0
        for key in candidates where groups[Int(key.group)].dirtyIndex < 0 && isLive(key) {
            while next < fresh.count && fresh[next] < key {
                merged.append(fresh[next])
                next += 1
            }
            merged.append(key)
        }
        merged.append(contentsOf: fresh[next...])
        candidates = merged
        candidateList.stale = 0
        return true
    }

    /// Ends the event: updates candidates and the visible view, and returns the updates of
    /// SEMANTICS §9 (allocating only when there are some, each array at its final size).
    mutating func finishEvent(_ scratch: inout EventScratch) -> [Update] {
        guard !scratch.dirty.isEmpty || scratch.optionsChanged else { return [] }
        // Index loops over the scratch lists: `for … in` would retain their storage.
        var candidatesChanged = scratch.optionsChanged
        for i in 0..<scratch.dirty.count where refreshCandidate(Int(scratch.dirty[i].group)) { candidatesChanged = true }

        scratch.reported.removeAll()
        for i in 0..<scratch.dirty.count { scratch.reported.append(scratch.dirty[i].group) }
        // The visible list is short (at most 25) and contiguous: membership tests scan it
        // rather than touching every visible group's storage.
        var general = false
        // After the quick path, the only groups whose visibility changes are these two.
        var entered: Int32 = -1
        var left: Int32 = -1
        if candidatesChanged {
            let quick = advanceViewQuickly(&scratch)
            if quick.handled {
                if quick.left >= 0 { scratch.reported.append(quick.left) }
                entered = quick.entered
                left = quick.left
            } else {
                general = true
            }
        }
        if general {
            collectTopCandidates(&scratch)
            if scratch.nextVisible != visible {
                for g in visible where !scratch.nextVisible.contains(g) { scratch.reported.append(g) }
                for g in scratch.nextVisible where !visible.contains(g) { scratch.reported.append(g) }
            }
            if let previous = scratch.previousGroupSizeMax, previous != groupSizeMax {
                for g in scratch.nextVisible { scratch.reported.append(g) }
            }
        }
        if scratch.reported.count > 1 { scratch.reported.sort() }

        var updates: [Update] = []
        let expectedUpdates = scratch.reported.count + (scratch.contentChangedId != 0 ? 1 : 0)
        // 1. Groups that left the view, by ascending group id.
        var previous: Int32 = -1
        for i in 0..<scratch.reported.count where scratch.reported[i] != previous {
            let g = scratch.reported[i]
            previous = g
            let group = Int(g)
            guard groups[group].isVisible && !isVisibleAfter(g, general: general, entered: entered, left: left, scratch) else { continue }
            let shown = shownBeforeRange(group, &scratch)
            updates.append(
                .group(
                    GroupUpdate(
                        groupId: groups[group].id, type: groups[group].type,
                        chat: chats[Int(groups[group].chat)].name, totalCount: totalCount(of: group),
                        isSilent: true, added: [], removedIds: scratch.savedShown.array(shown))),
                reservingIfEmpty: expectedUpdates)
        }
        // 2. Groups visible after the event whose visible set or total changed.
        previous = -1
        var contentGroup = -1
        var contentIndex = -1
        for i in 0..<scratch.reported.count where scratch.reported[i] != previous {
            let g = scratch.reported[i]
            previous = g
            let group = Int(g)
            guard isVisibleAfter(g, general: general, entered: entered, left: left, scratch) else { continue }
            let shownBefore = shownBeforeRange(group, &scratch)
            let changes = visibleChanges(of: group, before: shownBefore, &scratch)
            if changes.contentIndex >= 0 && groups[group].isVisible {
                contentGroup = group
                contentIndex = changes.contentIndex
            }
            let dirtyIndex = Int(groups[group].dirtyIndex)
            let totalBefore = dirtyIndex >= 0 ? Int(scratch.dirty[dirtyIndex].totalBefore) : totalCount(of: group)
            let total = totalCount(of: group)
            guard !changes.added.isEmpty || !changes.removed.isEmpty || total != totalBefore else { continue }
            let isSilent = scratch.createdId == 0 || scratch.createdSilent || !changes.addsCreated
            updates.append(
                .group(
                    GroupUpdate(
                        groupId: groups[group].id, type: groups[group].type,
                        chat: chats[Int(groups[group].chat)].name, totalCount: total,
                        isSilent: isSilent, added: changes.added, removedIds: changes.removed)),
                reservingIfEmpty: expectedUpdates)
        }
        // 3. The notification whose content changed, when visible before and after.
        if contentGroup >= 0 {
            updates.append(
                .notification(
                    NotificationUpdate(
                        groupId: groups[contentGroup].id, notification: publicValue(of: groups[contentGroup].active[contentIndex], scratch))),
                reservingIfEmpty: 1)
        }

        // The view after the event becomes the view.
        // Reported groups include the dirty ones: one access to each ends its event.
        for i in 0..<scratch.reported.count {
            let g = scratch.reported[i]
            let isVisible = candidatesChanged ? isVisibleAfter(g, general: general, entered: entered, left: left, scratch) : groups[Int(g)].isVisible
            groups[Int(g)].endEvent(isVisible: isVisible)
        }
        if general {
            swap(&visible, &scratch.nextVisible)
            scratch.nextVisible.removeAll(keepingCapacity: true)
        }
        scratch.dirty.removeAll()
        scratch.savedShown.removeAll()
        scratch.reported.removeAll()
        scratch.createdId = 0
        scratch.createdSilent = false
        scratch.createdTitle = nil
        scratch.createdTexts = nil
        scratch.contentChangedId = 0
        scratch.optionsChanged = false
        scratch.previousGroupSizeMax = nil
        return updates
    }

    /// Whether group `g` is visible after the event: in `scratch.nextVisible` after the general
    /// recomputation; otherwise as before the event (its ``NotificationGroup/isVisible``
    /// flag, not yet moved on), unless it is the group the quick path brought in or pushed out.
    @inline(__always)
    private func isVisibleAfter(_ g: Int32, general: Bool, entered: Int32, left: Int32, _ scratch: EventScratch) -> Bool {
        if general { return scratch.nextVisible.contains(g) }
        if g == entered { return true }
        if g == left { return false }
        return groups[Int(g)].isVisible
    }

    /// Where in `scratch.savedShown` the ids `group` showed before the event are (SEMANTICS §8):
    /// saved by ``touch(_:)`` for a group the event changed; for another, saved now (its
    /// notifications are as they were, under the `groupSizeMax` of before the event).
    @inline(__always)
    private mutating func shownBeforeRange(_ group: Int, _ scratch: inout EventScratch) -> Range<Int> {
        let dirtyIndex = Int(groups[group].dirtyIndex)
        if dirtyIndex >= 0 { return Int(scratch.dirty[dirtyIndex].shownStart)..<Int(scratch.dirty[dirtyIndex].shownEnd) }
        guard groups[group].isVisible else { return 0..<0 }
        let start = scratch.savedShown.count
        let count = groups[group].active.count
        for i in max(0, count - (scratch.previousGroupSizeMax ?? groupSizeMax))..<count { scratch.savedShown.append(groups[group].active[i].id) }
        return start..<scratch.savedShown.count
    }

    /// What `group` shows after the event against the ids it showed before
    /// (`savedShown[before]`, ascending): the notifications that became visible and the ids
    /// that stopped being, each array allocated at its size; the position in ``NotificationGroup/active``
    /// of `scratch.contentChangedId` when it is shown before and after, or -1; and whether
    /// `scratch.createdId` is among the added.
    private mutating func visibleChanges(
        of group: Int, before: Range<Int>
    , _ scratch: inout EventScratch) -> (added: [HeraldNotification], removed: [Int64], contentIndex: Int, addsCreated: Bool) {
        // Mutating, and plain loops: a non-mutating method (or closures) here made the
        // caller copy the whole account, retaining every array in it, at each call.
        let active = groups[group].active
        let afterStart = max(0, active.count - groupSizeMax)
        // One merge to count, then the arrays are filled at their size.
        var addedCount = 0
        var removedCount = 0
        var contentIndex = -1
        var addsCreated = false
        var a = before.lowerBound
        var b = afterStart
        while a < before.upperBound || b < active.count {
            if b == active.count || (a < before.upperBound && scratch.savedShown[a] < active[b].id) {
                removedCount += 1
                a += 1
            } else if a == before.upperBound || active[b].id < scratch.savedShown[a] {
                if active[b].id == scratch.createdId { addsCreated = true }
                addedCount += 1
                b += 1
            } else {
                if active[b].id == scratch.contentChangedId { contentIndex = b }
                a += 1
                b += 1
            }
        }
        var added: [HeraldNotification] = []
        if addedCount > 0 {
            a = before.lowerBound
            for b in afterStart..<active.count {
                let id = active[b].id
                while a < before.upperBound && scratch.savedShown[a] < id { a += 1 }
                if a < before.upperBound && scratch.savedShown[a] == id { continue }
                added.append(publicValue(of: active[b], scratch), reservingIfEmpty: addedCount)
            }
        }
        var removed: [Int64] = []
        if removedCount > 0 {
            removed.reserveCapacity(removedCount)
            b = afterStart
            for a in before {
                let id = scratch.savedShown[a]
                while b < active.count && active[b].id < id { b += 1 }
                if b < active.count && active[b].id == id { continue }
                removed.append(id)
            }
        }
        return (added, removed, contentIndex, addsCreated)
    }

    /// Fills `nextVisible` with the `groupCountMax` best candidates, best first (the
    /// candidate list is sorted ascending, so it is read from the top).
    mutating func collectTopCandidates(_ scratch: inout EventScratch) {
        scratch.nextVisible.removeAll(keepingCapacity: true)
        var i = candidates.count - 1
        while scratch.nextVisible.count < groupCountMax && i >= 0 {
            if isLive(candidates[i]) { scratch.nextVisible.append(candidates[i].group) }
            i -= 1
        }
    }
}

import Testing
@testable import IReporterKit

struct OAuthScopeTests {
    func scopes(_ text: String) throws -> OAuthScopes { try #require(OAuthScopes(parsing: text)) }

    @Test func onlyMastodonsNamesParse() throws {
        #expect(try scopes("read write follow push").description == "read write follow push", "in the client's order")
        #expect(try scopes("read+write:statuses read").description == "read write:statuses", "+ as the separator too, each once")
        #expect(try scopes("write read") == scopes("read write"), "equal as sets")
        #expect(OAuthScopes(parsing: "read writ") == nil)
        #expect(OAuthScopes(parsing: "read:everything") == nil)
        #expect(OAuthScopes(parsing: "admin:read") == nil, "no moderation API")
        #expect(try scopes("  ") == .defaultScopes, "none: read")
        #expect(OAuthScope("write:media") == .writeMedia)
    }

    @Test func aTopScopeCoversItsSubScopes() throws {
        let read = try scopes("read")
        #expect(read.covers(.readStatuses) && read.covers(.readNotifications) && read.covers(.read))
        #expect(!read.covers(.writeStatuses) && !read.covers(.write), "a read token cannot post")
        let writeStatuses = try scopes("write:statuses")
        #expect(writeStatuses.covers(.writeStatuses))
        #expect(!writeStatuses.covers(.write) && !writeStatuses.covers(.writeMedia), "a sub-scope covers itself only")
    }

    @Test func followMeansWhatMastodonExpandsItTo() throws {
        let follow = try scopes("follow")
        #expect(follow.covers(.readFollows) && follow.covers(.writeFollows) && follow.covers(.readBlocks))
        #expect(!follow.covers(.readStatuses) && !follow.covers(.read))
    }

    @Test func profileIsCoveredByReadingAccounts() throws {
        #expect(try scopes("profile").covers(.profile))
        #expect(try scopes("read").covers(.profile))
        #expect(try scopes("read:accounts").covers(.profile))
        #expect(!(try scopes("profile").covers(.readAccounts)), "profile is who you are, not every account")
        #expect(!(try scopes("write").covers(.profile)))
    }

    @Test func aTokenHasAtMostItsAppsScopes() throws {
        let app = try scopes("read write")
        #expect(app.covers(all: try scopes("read write:media")))
        #expect(!app.covers(all: try scopes("read follow")), "follow is its own scope for an app")
        #expect(!app.covers(all: try scopes("push")))
    }
}

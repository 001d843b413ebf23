/// Flickr's methods, as `flickr.reflection.getMethods` lists them: each its
/// name, whether its answers are kept, and (`FlickrAPI.answer`'s switch,
/// which has a case for each) its handler.
enum FlickrMethod: String, CaseIterable {
    case peopleFindByUsername = "flickr.people.findByUsername"
    case peopleGetInfo = "flickr.people.getInfo"
    case peopleGetPhotos = "flickr.people.getPhotos"
    case peopleGetPublicPhotos = "flickr.people.getPublicPhotos"
    case photosCommentsGetList = "flickr.photos.comments.getList"
    case photosGetInfo = "flickr.photos.getInfo"
    case photosGetRecent = "flickr.photos.getRecent"
    case photosGetSizes = "flickr.photos.getSizes"
    case photosSearch = "flickr.photos.search"
    case reflectionGetMethodInfo = "flickr.reflection.getMethodInfo"
    case reflectionGetMethods = "flickr.reflection.getMethods"
    case testEcho = "flickr.test.echo"

    /// The lists, whose rendered answers are kept (`AnswerCache`).
    var keepsAnswers: Bool {
        switch self {
        case .photosSearch, .photosGetRecent, .peopleGetPhotos, .peopleGetPublicPhotos: true
        case .peopleFindByUsername, .peopleGetInfo, .photosCommentsGetList, .photosGetInfo, .photosGetSizes, .reflectionGetMethodInfo,
             .reflectionGetMethods, .testEcho: false
        }
    }
}

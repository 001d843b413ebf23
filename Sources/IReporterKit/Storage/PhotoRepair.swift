/// `ireporter repair` and the sweep at every start, for the photo store
/// configured: the upload folder (`UploadRepair`) or the bucket
/// (`S3PhotoRepair`), with the same report, steps and refusals.
protocol PhotoRepair {
    func run(graceSeconds: Int, actions: UploadRepair.Actions, progress: TaskProgress?) throws -> UploadRepair.Report
}

extension UploadRepair: PhotoRepair {}

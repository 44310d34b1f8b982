-- AlterTable
ALTER TABLE "memberships" ADD COLUMN     "removed_at" TIMESTAMPTZ(3);
